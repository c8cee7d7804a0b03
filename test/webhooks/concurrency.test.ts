import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DELIVERY_CONCURRENCY, DELIVERY_CONCURRENCY_PER_ENDPOINT } from '../../src/webhooks/schedule.js';
import { runCli, tempDir } from '../helpers/paths.js';
import { LEAD, webhookServer } from './setup.js';

/**
 * A receiver that holds every request open until told to answer it, and notes at each arrival
 * how many requests were open (this one included), per path and in all.
 */
async function holdingReceiver() {
  const open: { path: string; res: http.ServerResponse }[] = [];
  const arrivals: { path: string; openOnPath: number; openInAll: number }[] = [];
  const waiters: { ready: () => boolean; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      open.push({ path, res });
      arrivals.push({ path, openOnPath: open.filter((o) => o.path === path).length, openInAll: open.length });
      for (const w of waiters.splice(0))
        if (w.ready()) w.resolve();
        else waiters.push(w);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    arrivals,
    openOn: (path: string) => open.filter((o) => o.path === path).length,
    /** Resolves once `ready()` holds after an arrival (or at once). */
    until(ready: () => boolean): Promise<void> {
      if (ready()) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ ready, resolve }));
    },
    /** Answers 204 to the open requests on `path`. */
    answer(path: string): void {
      for (let i = open.length - 1; i >= 0; i--) {
        if (open[i]!.path !== path) continue;
        open[i]!.res.writeHead(204).end();
        open.splice(i, 1);
      }
    },
    close(): Promise<void> {
      for (const o of open.splice(0)) o.res.writeHead(204).end();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

test('the documented defaults: 64 deliveries in flight per process, 8 per endpoint', () => {
  assert.equal(DELIVERY_CONCURRENCY, 64);
  assert.equal(DELIVERY_CONCURRENCY_PER_ENDPOINT, 8);
});

test('--webhook-concurrency and --webhook-endpoint-concurrency (as the server options they set) bound deliveries in flight, in all and per endpoint', async () => {
  const rx = await holdingReceiver();
  const { s, addEndpoint, post } = await webhookServer({ webhookConcurrency: { total: 3, perEndpoint: 2 } });
  try {
    await addEndpoint({ url: `${rx.url}/slow`, events: ['conversation.started'] });
    await addEndpoint({ url: `${rx.url}/second`, events: ['lead.captured'] });
    await addEndpoint({ url: `${rx.url}/third`, events: ['escalation.triggered'] });
    for (let i = 0; i < 5; i++) assert.equal((await post('conversation.started', { conversation_id: `ses_${i}`, visitor_id: 'vis_1' })).status, 202);
    assert.equal((await post('lead.captured', LEAD)).status, 202);
    // Two for the slow endpoint (its limit) and one for the second: the process's three.
    await rx.until(() => rx.openOn('/slow') === 2 && rx.openOn('/second') === 1);
    assert.equal((await post('escalation.triggered', { conversation_id: 'ses_abc123', visitor_id: 'vis_42', reason: 'asked for a person' })).status, 202);
    // The third endpoint's delivery waits for a free slot; the second's answer frees one, and the slow endpoint is at its limit.
    rx.answer('/second');
    await rx.until(() => rx.openOn('/third') === 1);
    assert.equal(rx.openOn('/slow'), 2);
    for (const a of rx.arrivals) {
      assert.ok(a.openInAll <= 3, `${a.openInAll} open at once`);
      if (a.path === '/slow') assert.ok(a.openOnPath <= 2, `${a.openOnPath} open on the slow endpoint`);
    }
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('serve refuses a bad --webhook-concurrency or --webhook-endpoint-concurrency with one line naming the flag', async () => {
  const dir = tempDir();
  try {
    const serve = (...flags: string[]) => runCli(['serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'b.db'), ...flags]);
    for (const [flags, message] of [
      [['--webhook-concurrency', '0'], /--webhook-concurrency must be an integer from 1 to 1024, got "0"/],
      [['--webhook-concurrency', '1025'], /--webhook-concurrency must be an integer from 1 to 1024/],
      [['--webhook-endpoint-concurrency', 'many'], /--webhook-endpoint-concurrency must be an integer from 1 to 1024, got "many"/],
      [['--webhook-endpoint-concurrency', '100'], /--webhook-endpoint-concurrency \(100\) must not exceed --webhook-concurrency \(64\)/],
      [
        ['--webhook-concurrency', '4', '--webhook-endpoint-concurrency', '5'],
        /--webhook-endpoint-concurrency \(5\) must not exceed --webhook-concurrency \(4\)/,
      ],
    ] as const) {
      const r = await serve(...flags);
      assert.equal(r.code, 1, flags.join(' '));
      assert.match(r.stderr, message);
    }
  } finally {
    dir.dispose();
  }
});
