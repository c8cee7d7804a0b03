import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { DEDUP_MAX_IDS, DEDUP_WINDOW_MS, DeliveryIds } from '../../src/cli/commands/webhooks-dedup.js';
import { createInterface } from 'node:readline';
import { cli } from '../helpers/paths.js';
import { listenSecret } from '../../src/cli/commands/webhooks.js';
import { serviceSignature, standardKey, standardSignature } from '../../src/public/webhooks.js';
import { LEAD, webhookServer } from './setup.js';

test('webhooks listen verifies a real delivery (200) and refuses a forged one (400), printing JSON lines', async () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--secret', secret, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
  const { s, addEndpoint, post, widgetId } = await webhookServer();
  try {
    const { listening } = await next();
    assert.match(listening, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const ep = await addEndpoint({ url: listening, events: ['lead.captured'], secret });
    await post('lead.captured', LEAD);
    const line = await next();
    assert.equal(line.valid, true);
    assert.equal(line.event, 'lead.captured');
    assert.match(line.id, /^dlv_/);
    assert.deepEqual(line.payload, { event: 'lead.captured', widget_id: widgetId, data: LEAD });
    await s.webhooks.dispatcher.runDue();
    const [d] = (await s.webhooks.service.store.listDeliveries(ep.id as never, { limit: 1, before: null })).data;
    assert.equal(d!.status, 'succeeded');
    assert.equal(d!.lastStatusCode, 200);

    const forged = await fetch(listening, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': `v1,${'A'.repeat(44)}`,
      },
      body: '{"event":"lead.captured"}',
    });
    assert.equal(forged.status, 400);
    const refused = await next();
    assert.equal(refused.valid, false);
    assert.equal(refused.error, 'bad_signature');

    // issue 14: a delivery signed only with X-Service-Signature binds no timestamp (replayable): refused by default.
    const body = '{"event":"lead.captured"}';
    const untimestamped = await fetch(listening, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': serviceSignature(body, secret) },
      body,
    });
    assert.equal(untimestamped.status, 400);
    assert.equal((await next()).error, 'missing_signature');
  } finally {
    child.kill('SIGTERM');
    await s.stop();
  }
});

test('webhooks listen --allow-untimestamped accepts X-Service-Signature alone', async () => {
  const secret = 'plain shared secret';
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--secret', secret, '--port', '0', '--json', '--allow-untimestamped'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
  try {
    const { listening } = await next();
    const body = '{"event":"lead.captured"}';
    const res = await fetch(listening, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': serviceSignature(body, secret) },
      body,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const line = await next();
    assert.equal(line.valid, true);
    assert.equal(line.scheme, 'x-service-signature');
  } finally {
    child.kill('SIGTERM');
  }
});

/** A delivery signed the Standard Webhooks way, as the emitter sends it. */
function signed(secret: string, body: string, id = 'msg_forward_1'): Record<string, string> {
  const ts = Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': standardSignature(id, ts, body, standardKey(secret)),
  };
}

test('webhooks listen takes its secret from BRAINSTEM_WEBHOOK_SECRET (not the command line) and --forward-to sends each verified delivery on, reporting its status', async () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const target = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const forwardTo = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hook`;
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--port', '0', '--json', '--forward-to', forwardTo], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BRAINSTEM_WEBHOOK_SECRET: secret },
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
  try {
    const ready = await next();
    assert.equal(ready.secret, undefined, 'a secret given is never printed');
    assert.equal(ready.forwardTo, forwardTo);
    const body = '{"event":"lead.captured"}';
    const res = await fetch(ready.listening, { method: 'POST', headers: signed(secret, body), body });
    assert.equal(res.status, 200);
    const line = await next();
    assert.equal(line.valid, true);
    assert.deepEqual(line.forwarded, { to: forwardTo, status: 202 });
    assert.equal(received.length, 1);
    assert.equal(received[0]!.body, body);
    assert.equal(received[0]!.headers['webhook-id'], 'msg_forward_1');
    // A forged delivery is refused and not forwarded.
    const forged = await fetch(ready.listening, { method: 'POST', headers: signed('whsec_AAAA', body, 'msg_forged'), body });
    assert.equal(forged.status, 400);
    assert.equal((await next()).valid, false);
    assert.equal(received.length, 1);
    assert.doesNotMatch(stderr, /warning/);
  } finally {
    child.kill('SIGTERM');
    target.close();
  }
});

// Issue 29: the same webhook-id (a retry of a delivery already answered) was forwarded twice.
test('issue 29: webhooks listen --forward-to forwards a given webhook-id once (a retry is acknowledged, not forwarded again)', async () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const received: string[] = [];
  const target = http.createServer((req, res) => {
    received.push(String(req.headers['webhook-id']));
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const forwardTo = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hook`;
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--port', '0', '--json', '--forward-to', forwardTo], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BRAINSTEM_WEBHOOK_SECRET: secret },
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
  try {
    const ready = await next();
    const body = '{"event":"lead.captured"}';
    for (const id of ['msg_once', 'msg_once', 'msg_other', 'msg_once']) {
      const res = await fetch(ready.listening, { method: 'POST', headers: signed(secret, body, id), body });
      assert.equal(res.status, 200, 'a retry is still acknowledged, so the sender stops retrying');
      const line = await next();
      assert.equal(line.id, id);
    }
    assert.deepEqual(received, ['msg_once', 'msg_other']);
  } finally {
    child.kill('SIGTERM');
    target.close();
  }
});

test('issue 29: the delivery ids webhooks listen remembers expire after 5 minutes and stay bounded in number', () => {
  let now = 0;
  const ids = new DeliveryIds(() => now, DEDUP_WINDOW_MS, 3);
  assert.equal(ids.first('a'), true);
  assert.equal(ids.first('a'), false);
  now += DEDUP_WINDOW_MS - 1;
  assert.equal(ids.first('a'), false, 'inside the window');
  now += 1;
  assert.equal(ids.first('a'), true, 'forgotten once the window passed');
  for (const id of ['b', 'c', 'd', 'e']) ids.first(id);
  assert.equal(ids.size, 3, 'at most the bound');
  assert.equal(ids.first('x'.repeat(100_000)), true);
  assert.equal(ids.first('x'.repeat(100_000)), false, 'a long id is remembered by its hash');
  assert.equal(DEDUP_WINDOW_MS, 5 * 60_000);
  assert.ok(DEDUP_MAX_IDS <= 100_000);
});

test('webhooks listen with no secret generates one and prints it; --secret still works, with a warning that ps shows it', async () => {
  const gen = spawn(process.execPath, [cli, 'webhooks', 'listen', '--port', '0', '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BRAINSTEM_WEBHOOK_SECRET: '' },
  });
  const genLines = createInterface({ input: gen.stdout! })[Symbol.asyncIterator]();
  try {
    const ready = JSON.parse((await genLines.next()).value as string);
    assert.match(ready.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const body = '{"event":"lead.captured"}';
    assert.equal((await fetch(ready.listening, { method: 'POST', headers: signed(ready.secret, body), body })).status, 200);
  } finally {
    gen.kill('SIGTERM');
  }
  const flag = spawn(process.execPath, [cli, 'webhooks', 'listen', '--port', '0', '--secret', 'shared'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = createInterface({ input: flag.stderr! })[Symbol.asyncIterator]();
  try {
    const warning = (await stderr.next()).value as string;
    assert.match(warning, /--secret is visible .*ps.*BRAINSTEM_WEBHOOK_SECRET.*--secret-file/);
  } finally {
    flag.kill('SIGTERM');
  }
});

test('webhooks listen --secret-file reads one line (trailing newline dropped); an empty or missing file, or two sources, is a clear error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'listen-secret-'));
  try {
    const file = join(dir, 'secret');
    writeFileSync(file, 'whsec_AAAA\n');
    assert.deepEqual(listenSecret({ secretFile: file }, {}), { secret: 'whsec_AAAA', from: 'file' });
    writeFileSync(file, '');
    assert.throws(() => listenSecret({ secretFile: file }, {}), /--secret-file .* is empty/);
    assert.throws(() => listenSecret({ secretFile: join(dir, 'none') }, {}), /--secret-file .* cannot be read: ENOENT/);
    assert.throws(() => listenSecret({ secretFile: file, secret: 'x' }, {}), /give one/);
    assert.deepEqual(listenSecret({}, { BRAINSTEM_WEBHOOK_SECRET: 'from-env' }), { secret: 'from-env', from: 'env' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
