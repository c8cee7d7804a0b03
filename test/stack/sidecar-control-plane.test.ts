import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { ADMIN, call, relay, spawnCli, stop, tick, waitFor, type Child } from './helpers.js';

const LISTEN = /listening on (http:\/\/\S+)/;

/**
 * Two real processes: `brainstem serve` (the control plane) and `brainstem sidecar` bound to it
 * with short intervals. Publishing, rollback, a 304, a control-plane outage with buffered
 * telemetry, a sidecar restart from its disk copy, and a revoked key, each seen on /status.
 */
test('sidecar on the control plane: publish, rollback, outage, restart from disk, revocation', async () => {
  const tmp = tempDir('brainstem-stack-');
  const db = join(tmp.path, 'cp.db');
  const stateDir = join(tmp.path, 'sidecar-state');
  const children: Child[] = [];
  const link = await relay();
  // The sidecar here polls every 0.2 s and reports every 0.3 s, past a server key's default
  // 120 requests a minute and a server's 2 reports a second: this test raises both.
  const limits = join(tmp.path, 'limits.json');
  writeFileSync(limits, JSON.stringify({ serverKey: 10_000, telemetryReports: 100 }));
  const serve = async (addr: string) => {
    const c = await spawnCli(['serve', '--addr', addr, '--db', db, '--data', join(tmp.path, 'data'), '--limits', limits], LISTEN);
    children.push(c);
    return { ...c, url: c.match[1]! };
  };
  try {
    let cp = await serve('127.0.0.1:0');
    let api = cp.url;
    link.backend = api;
    const tenant = await call(api, 'POST', '/v1/admin/tenants', { token: ADMIN, body: { name: 'stack', plan: 'agency' } });
    await call(api, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, {
      token: ADMIN,
      body: { email: 'op@example.com', password: 'correct horse battery' },
    });
    const session = (await call(api, 'POST', '/v1/auth/login', { body: { email: 'op@example.com', password: 'correct horse battery' } })).body.token as string;
    const server = (await call(api, 'POST', '/v1/servers', { token: session, body: { name: 'alpha' } })).body;
    const key = (await call(api, 'POST', `/v1/servers/${server.id}/keys`, { token: session })).body;
    assert.match(key.key, /^bsk_/);

    const sidecarArgs = [
      'sidecar',
      '--addr',
      '127.0.0.1:0',
      '--control-plane',
      link.url,
      '--server-id',
      String(server.id),
      '--server-key',
      key.key,
      '--poll-interval',
      '0.2',
      '--telemetry-interval',
      '0.3',
      '--max-backoff',
      '0.4',
      '--state-dir',
      stateDir,
    ];
    const startSidecar = async () => {
      const c = await spawnCli(sidecarArgs, LISTEN);
      children.push(c);
      return { ...c, url: c.match[1]! };
    };
    let sc = await startSidecar();
    const status = async () => (await call(sc.url, 'GET', '/status')).body;
    const until = (what: string, ok: (s: any) => boolean) =>
      waitFor(what, async () => {
        const s = await status();
        return ok(s) ? s : undefined;
      });
    const post = async (body: Record<string, unknown>) => {
      const started = Date.now();
      const res = await call(sc.url, 'POST', '/tick', { body });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return Date.now() - started;
    };
    const totals = async () => {
      const feed = (await call(api, 'GET', `/v1/servers/${server.id}/activity?limit=100`, { token: session })).body as { kind: string; count: number }[];
      const t: Record<string, number> = {};
      for (const e of feed) t[e.kind] = (t[e.kind] ?? 0) + e.count;
      return t;
    };

    let s = await until('version 1 from the control plane', (x) => x.version === 1 && x.source === 'control-plane');
    // On a busy machine a poll may already have followed the pull that brought version 1: a 304 is as healthy.
    assert.ok(['ok', 'not_modified'].includes(s.controlPlane.lastPull.outcome), s.controlPlane.lastPull.outcome);
    assert.equal(s.lastError, null);

    // Publish: the sidecar applies the new head within a poll interval.
    const head = (await call(api, 'GET', `/v1/servers/${server.id}/config`, { token: session })).body;
    const published = await call(api, 'PUT', `/v1/servers/${server.id}/config`, {
      token: session,
      body: { ...head, policy: { ...head.policy, emotes: false } },
    });
    assert.equal(published.status, 200, JSON.stringify(published.body));
    assert.equal(published.body.version, 2);
    s = await until('version 2 applied', (x) => x.version === 2);
    assert.equal(s.source, 'control-plane');
    // Then the pulls are 304s and nothing changes.
    s = await until('a 304 after the publish', (x) => x.controlPlane.lastPull.outcome === 'not_modified');
    assert.equal(s.version, 2);

    // Rollback: a new head with the old content.
    const rolled = await call(api, 'POST', `/v1/servers/${server.id}/config/rollback`, { token: session, body: { version: 1 } });
    assert.equal(rolled.status, 200);
    assert.equal(rolled.body.version, 3);
    await until('version 3 (rollback) applied', (x) => x.version === 3);

    // Five characters, each seeing its own hostile player: 5 spawn, 5 snap, 5 players.
    for (let agent = 1; agent <= 5; agent++) await post(tick(agent, 100 + agent));
    await waitFor('the first ticks counted on the control plane', async () => {
      const t = await totals();
      return t.spawn === 5 && t.snap === 5 ? t : undefined;
    });
    const overview = (await call(api, 'GET', `/v1/servers/${server.id}/overview`, { token: session })).body;
    assert.equal(overview.survivors, 5);
    assert.equal(overview.players, 5);
    assert.equal(typeof overview.p50, 'number');

    // The control plane dies: ticks keep being answered, telemetry is buffered.
    await stop(cp.child, 'SIGKILL');
    link.backend = null;
    for (let agent = 6; agent <= 9; agent++) assert.ok((await post(tick(agent, 100 + agent))) < 1000);
    s = await until(
      'reports buffered while the control plane is down',
      (x) => x.controlPlane.buffered > 0 && x.controlPlane.lastPush.outcome.startsWith('error: '),
    );
    assert.equal(s.version, 3);

    // The sidecar restarts while the control plane is still down: it runs the bundle on disk.
    await stop(sc.child);
    sc = await startSidecar();
    s = await status();
    assert.equal(s.source, 'disk-cache');
    assert.equal(s.version, 3);
    assert.ok(s.controlPlane.buffered > 0);
    assert.match(s.controlPlane.lastPull.outcome, /^error: /);
    await post(tick(20)); // one more spawn, no hostile
    const pending = readFileSync(join(stateDir, 'telemetry.jsonl'), 'utf8');
    assert.ok(pending.length > 0);

    // The control plane returns on the same DB: every buffered report arrives once.
    cp = await serve('127.0.0.1:0');
    api = link.backend = cp.url;
    s = await until(
      'buffer drained and back on the control plane',
      (x) => x.controlPlane.buffered === 0 && x.source === 'control-plane' && x.controlPlane.lastPush.outcome === 'ok',
    );
    assert.equal(s.version, 3);
    await waitFor('buffered reports counted', async () => {
      const t = await totals();
      return t.spawn === 10 ? t : undefined;
    });
    // Let a few more (empty) reports pass: nothing is counted twice.
    await new Promise((r) => setTimeout(r, 700));
    const after = await totals();
    assert.equal(after.spawn, 10);
    assert.equal(after.snap, 9);
    const usage = (await call(api, 'GET', `/v1/servers/${server.id}/usage`, { token: session })).body;
    assert.equal(usage.linesSpoken, 0);
    assert.equal(usage.spendUsd, 0);
    const economy = (await call(api, 'GET', `/v1/servers/${server.id}/economy`, { token: session })).body;
    assert.equal(economy.totalUsd, 0);

    // The key is revoked: ticks continue on the applied bundle, polling goes on with back-off,
    // /status says why and since when, and the log says it once.
    const logged = sc.stderr.length;
    const revoked = await call(api, 'DELETE', `/v1/servers/${server.id}/keys/${key.id}`, { token: session });
    assert.ok(revoked.status === 200 || revoked.status === 204, String(revoked.status));
    s = await until('pulls refused after revocation', (x) => x.controlPlane.lastPull.outcome === 'unauthorized' && x.controlPlane.consecutiveErrors >= 2);
    assert.match(s.lastError, /refused the server key/);
    assert.ok(!Number.isNaN(Date.parse(s.lastErrorSince)));
    assert.equal(typeof s.controlPlane.nextPullAt, 'string');
    assert.equal(s.version, 3);
    await post(tick(21));
    const since = sc.stderr.slice(logged).join('\n');
    assert.equal((since.match(/refused the server key; keeping the applied bundle/g) ?? []).length, 1);
    assert.ok(!since.includes('unreachable'), 'a refused key is not reported as unreachable');
  } finally {
    for (const c of children) await stop(c.child);
    await link.close();
    tmp.dispose();
  }
});
