import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applied, RecordingLogger, stack } from './helpers.js';
import { AttackerProxy } from './proxy.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { signRequest } from '../../src/signing/request.js';

test('a publish is pushed: the sidecar holds the stream, /status says live, and it pulls the new version at once', async () => {
  const s = await stack();
  try {
    const { sidecar, logger } = await s.start();
    await logger.seen((l) => l.message === 'bundle applied from the control plane' || l.message.startsWith('config stream'));
    // Live once the stream's first event arrived; wait for the source to say so.
    while (((await (await fetch(`${sidecar.url}/status`)).json()) as any).controlPlane.path !== 'live') await new Promise((r) => setImmediate(r));
    const summary = await s.cp.call('GET', '/v1/servers', { token: s.token });
    assert.equal(summary.body[0].connection.path, 'live');
    // Polling is an hour away: only the push can bring this version.
    const next = applied(2);
    const waiting = logger.next(next);
    const version = await s.publish((b) => (b.speech.limits.per_hour = 7));
    assert.equal(version, 2);
    await waiting;
    const status: any = await (await fetch(`${sidecar.url}/status`)).json();
    assert.equal(status.version, 2);
    assert.equal(status.controlPlane.path, 'live');
    assert.equal(status.controlPlane.stream.state, 'live');
    // A rollback is pushed the same way (a new, higher version).
    const rolled = logger.next(applied(3));
    const rb = await s.cp.call('POST', `/v1/servers/${s.server.serverId}/config/rollback`, { token: s.token, body: { version: 1 } });
    assert.equal(rb.body.version, 3);
    await rolled;
  } finally {
    await s.stop();
  }
});

test('the stream falls back to polling when the control plane goes away, and says so on /status', async () => {
  const s = await stack();
  try {
    const { sidecar, logger } = await s.start({ pollMs: 3_600_000 });
    while (((await (await fetch(`${sidecar.url}/status`)).json()) as any).controlPlane.path !== 'live') await new Promise((r) => setImmediate(r));
    const down = logger.next((l) => l.message === 'config stream down; polling until it is back');
    s.cp.close().catch(() => {});
    await down;
    const status: any = await (await fetch(`${sidecar.url}/status`)).json();
    assert.equal(status.controlPlane.path, 'polling');
    assert.notEqual(status.controlPlane.stream.lastError, null);
  } finally {
    await s.stop().catch(() => {});
  }
});

async function openStream(url: string, key: string, target: string, extra: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(url + target, { headers: { ...signRequest(key, { method: 'GET', target }), ...extra }, signal: abort.signal });
  return { res, abort };
}

test('GET /v1/config/stream is signed like a pull: a bad signature, a replay and another server are refused in the error shape', async () => {
  const s = await stack();
  try {
    const target = `/v1/config/stream?server=${s.server.serverId}&nonce=a1`;
    const bad = await fetch(s.cp.url + target, { headers: { ...signRequest(s.server.key, { method: 'GET', target: `${target}x` }) } });
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as any).error.code, 'unauthorized');
    const headers = signRequest(s.server.key, { method: 'GET', target });
    const first = await fetch(s.cp.url + target, { headers });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), 'text/event-stream');
    const reader = first.body!.getReader();
    const { value } = await reader.read();
    const text = new TextDecoder().decode(value);
    assert.match(text, /^retry: \d+\n\nevent: version\ndata: \{"version":1,"etag":"\\"v1\\""\}\n\n/);
    await reader.cancel();
    const replay = await fetch(s.cp.url + target, { headers });
    assert.equal(replay.status, 401);
    const other = `/v1/config/stream?server=999999&nonce=b2`;
    const res = await fetch(s.cp.url + other, { headers: signRequest(s.server.key, { method: 'GET', target: other }) });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as any).error.code, 'config_not_found');
    const none = `/v1/config/stream?nonce=c3`;
    const missing = await fetch(s.cp.url + none, { headers: signRequest(s.server.key, { method: 'GET', target: none }) });
    assert.equal(missing.status, 400);
    // Read as the pull reads it: a leading zero names no server, and the parameter twice is refused.
    const zero = `/v1/config/stream?server=0${s.server.serverId}&nonce=d4`;
    const zeroRes = await fetch(s.cp.url + zero, { headers: signRequest(s.server.key, { method: 'GET', target: zero }) });
    assert.equal(zeroRes.status, 404);
    assert.equal(((await zeroRes.json()) as any).error.code, 'config_not_found');
    const twice = `/v1/config/stream?server=${s.server.serverId}&server=${s.server.serverId}&nonce=e5`;
    const twiceRes = await fetch(s.cp.url + twice, { headers: signRequest(s.server.key, { method: 'GET', target: twice }) });
    assert.equal(twiceRes.status, 400);
    assert.match(((await twiceRes.json()) as any).error.message, /"server" is given more than once/);
  } finally {
    await s.stop();
  }
});

test('CONFIG_STREAM_LIMITS: a server key holds at most perKey streams, the process at most total; one more is 429 with Retry-After', async () => {
  const s = await stack({ streamLimits: { perKey: 2, total: 3 } });
  const open: AbortController[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const { res, abort } = await openStream(s.cp.url, s.server.key, `/v1/config/stream?server=${s.server.serverId}&nonce=k${i}`);
      assert.equal(res.status, 200);
      open.push(abort);
    }
    const { res: third } = await openStream(s.cp.url, s.server.key, `/v1/config/stream?server=${s.server.serverId}&nonce=k3`);
    assert.equal(third.status, 429);
    assert.equal(third.headers.get('retry-after'), '30');
    assert.equal(((await third.json()) as any).error.code, 'rate_limited');
    // A second server's key: its own first stream fits, then the process total (3) is reached.
    const key2 = await s.cp.call('POST', `/v1/servers/${s.server.serverId}/keys`, { token: s.token });
    const { res: other, abort } = await openStream(s.cp.url, key2.body.key, `/v1/config/stream?server=${s.server.serverId}&nonce=o1`);
    assert.equal(other.status, 200);
    open.push(abort);
    const key3 = await s.cp.call('POST', `/v1/servers/${s.server.serverId}/keys`, { token: s.token });
    const { res: over } = await openStream(s.cp.url, key3.body.key, `/v1/config/stream?server=${s.server.serverId}&nonce=o2`);
    assert.equal(over.status, 429);
    assert.match(((await over.json()) as any).error.message, /limit of 3 config streams/);
  } finally {
    for (const a of open) a.abort();
    await s.stop();
  }
});

test('CONFIG_STREAM_LIMITS.heartbeatMs: an idle stream gets a comment line on every beat; a sidecar that hears nothing for its idle limit reconnects', async () => {
  const s = await stack({ streamLimits: { heartbeatMs: 50 } });
  try {
    const target = `/v1/config/stream?server=${s.server.serverId}&nonce=hb1`;
    const { res, abort } = await openStream(s.cp.url, s.server.key, target);
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/: heartbeat\n\n/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /^retry: 2000\n\nevent: version\n/);
    abort.abort();
    await reader.cancel().catch(() => {});
    while (s.cp.controlPlane.streams.count() !== 0) await new Promise((r) => setImmediate(r));
    // A path that holds the stream open but lets nothing through: the sidecar gives up on it.
    const proxy = await new AttackerProxy(s.cp.url).start();
    proxy.withholdStream = true;
    try {
      const logger = new RecordingLogger();
      const dead = logger.next((l) => l.message === 'config stream down; polling until it is back' && /no heartbeat for 300 ms/.test(String(l.fields.reason)));
      await s.start({ url: proxy.url, streamIdleMs: 300 }, logger);
      await dead;
    } finally {
      await proxy.stop();
    }
  } finally {
    await s.stop();
  }
});

test('a revoked key or a suspended tenant loses its open streams at once; the reconnect is refused', async () => {
  const s = await stack();
  try {
    const readToEnd = async (res: Response) => {
      const reader = res.body!.getReader();
      while (!(await reader.read()).done);
    };
    const key2 = (await s.cp.call('POST', `/v1/servers/${s.server.serverId}/keys`, { token: s.token })).body;
    const { res: byKey2 } = await openStream(s.cp.url, key2.key, `/v1/config/stream?server=${s.server.serverId}&nonce=r1`);
    const { res: byKey1 } = await openStream(s.cp.url, s.server.key, `/v1/config/stream?server=${s.server.serverId}&nonce=r2`);
    assert.equal(s.cp.controlPlane.streams.count(), 2);
    const ended = readToEnd(byKey2);
    assert.equal((await s.cp.call('DELETE', `/v1/servers/${s.server.serverId}/keys/${key2.id}`, { token: s.token })).status, 204);
    await ended;
    assert.equal(s.cp.controlPlane.streams.count(), 1);
    const { res: again } = await openStream(s.cp.url, key2.key, `/v1/config/stream?server=${s.server.serverId}&nonce=r3`);
    assert.equal(again.status, 401);

    const tenantId = (await s.cp.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN })).body[0].id;
    const gone = readToEnd(byKey1);
    assert.equal((await s.cp.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN })).status, 200);
    await gone;
    const { res: suspended } = await openStream(s.cp.url, s.server.key, `/v1/config/stream?server=${s.server.serverId}&nonce=r4`);
    assert.equal(suspended.status, 403);
    assert.equal(((await suspended.json()) as any).error.code, 'tenant_suspended');
  } finally {
    await s.stop();
  }
});
