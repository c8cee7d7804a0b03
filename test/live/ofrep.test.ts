import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenFeature, ErrorCode } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { DEFAULT_BUNDLE, type ConfigBundle } from '../../brain/index.js';
import { startSidecar, type Sidecar } from '../../src/sidecar/service.js';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { connect } from 'node:net';
import { FlagSet, OFREP_LIMITS } from '../../src/sidecar/flags/ofrep.js';
import { rawRequest } from '../helpers/raw-http.js';
import { stack } from './helpers.js';

const FLAGS: ConfigBundle['flags'] = {
  double_xp: { type: 'boolean', value: false, rules: [{ if: { map: ['chernarus'] }, value: true, variant: 'weekend' }] },
  zombie_density: { type: 'number', value: 1.5 },
  motd: { type: 'string', value: 'hi', rules: [{ if: { percentage: 50 }, value: 'beta' }] },
  prices: { type: 'object', value: { ak: 1200 } },
};
const TOKEN = 'tok_ofrep_test';

async function sidecarWith(flags: ConfigBundle['flags']): Promise<Sidecar> {
  return startSidecar({
    host: '127.0.0.1',
    port: 0,
    workers: 0,
    token: TOKEN,
    serverId: '7',
    source: new DefaultsSource({ ...DEFAULT_BUNDLE, version: 9, flags }),
  });
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

test('OFREP single flag: value, reason, variant; FLAG_NOT_FOUND 404, PARSE_ERROR and INVALID_CONTEXT 400, TARGETING_KEY_MISSING; behind the token', async () => {
  const sc = await sidecarWith(FLAGS);
  try {
    const ok = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', { context: { targetingKey: 'p1', map: 'chernarus' } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { key: 'double_xp', value: true, reason: 'TARGETING_MATCH', variant: 'weekend', metadata: { bundleVersion: 9 } });
    const def = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', { context: { map: 'livonia' } });
    assert.deepEqual([def.body.value, def.body.reason, def.body.variant], [false, 'DEFAULT', 'default']);
    const stat = await post(sc.url, '/ofrep/v1/evaluate/flags/zombie_density', {});
    assert.deepEqual([stat.body.value, stat.body.reason], [1.5, 'STATIC']);
    const missing = await post(sc.url, '/ofrep/v1/evaluate/flags/nope', { context: {} });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.errorCode, 'FLAG_NOT_FOUND');
    assert.equal(missing.body.key, 'nope');
    const parse = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', '{not json');
    assert.deepEqual([parse.status, parse.body.errorCode, parse.body.key], [400, 'PARSE_ERROR', 'double_xp']);
    const bad = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', { context: { players: -1 } });
    assert.deepEqual([bad.status, bad.body.errorCode], [400, 'INVALID_CONTEXT']);
    // A count past 2^53 - 1 is not the count sent: 1e308 passed as an integer and matched no rule.
    for (const players of ['1e308', '9007199254740992', '1.5', '-0.5']) {
      const r = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', `{"context":{"players":${players}}}`);
      assert.deepEqual([r.status, r.body.errorCode], [400, 'INVALID_CONTEXT'], players);
    }
    const most = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', `{"context":{"players":${Number.MAX_SAFE_INTEGER}}}`);
    assert.equal(most.status, 200);
    const split = await post(sc.url, '/ofrep/v1/evaluate/flags/motd', { context: {} });
    assert.deepEqual([split.status, split.body.errorCode], [400, 'TARGETING_KEY_MISSING']);
    const noToken = await fetch(`${sc.url}/ofrep/v1/evaluate/flags/double_xp`, { method: 'POST', body: '{}' });
    assert.equal(noToken.status, 401);
    const big = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', { context: { pad: 'x'.repeat(OFREP_LIMITS.maxBody) } });
    assert.equal(big.status, 413);
    const long = await post(sc.url, '/ofrep/v1/evaluate/flags/double_xp', { context: { targetingKey: 'k'.repeat(OFREP_LIMITS.maxAttribute + 1) } });
    assert.deepEqual([long.status, long.body.errorCode], [400, 'INVALID_CONTEXT']);
  } finally {
    await sc.close();
  }
});

test('OFREP single flag, the edges of its fast route: every token form, ?errors=body, a refused declared size before the body, a body in pieces, a malformed key, an empty body', async () => {
  const sc = await sidecarWith(FLAGS);
  try {
    const path = '/ofrep/v1/evaluate/flags/double_xp';
    const body = JSON.stringify({ context: { map: 'chernarus' } });
    const expected = { key: 'double_xp', value: true, reason: 'TARGETING_MATCH', variant: 'weekend', metadata: { bundleVersion: 9 } };
    for (const [target, headers] of [
      [path, { authorization: `Bearer ${TOKEN}` }],
      [path, { 'x-brain-token': TOKEN }],
      [`${path}?token=${TOKEN}`, {}],
    ] as const) {
      const a = await rawRequest(sc.port, { method: 'POST', target, headers: { 'content-type': 'application/json', ...headers }, body });
      assert.equal(a.status, 200, target);
      assert.equal(a.headers['content-type'], 'application/json');
      assert.equal(a.headers['x-content-type-options'], 'nosniff');
      assert.deepEqual(JSON.parse(a.body.toString()), expected);
    }
    // The first form present is the one judged, as on /tick.
    const wrong = await rawRequest(sc.port, { method: 'POST', target: `${path}?token=${TOKEN}`, headers: { authorization: 'Bearer nope' }, body });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['www-authenticate'], 'Bearer');
    assert.equal(JSON.parse(wrong.body.toString()).error.code, 'unauthorized');
    const inBody = await rawRequest(sc.port, { method: 'POST', target: `${path}?errors=body`, body });
    assert.equal(inBody.status, 200);
    assert.equal(JSON.parse(inBody.body.toString()).error.code, 'unauthorized');
    // A declared body over the limit is refused before a byte of it is read, and the connection closed.
    const refused = await new Promise<{ text: string; closed: boolean }>((resolve) => {
      const socket = connect(sc.port, '127.0.0.1', () =>
        socket.write(`POST ${path} HTTP/1.1\r\nhost: a\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${OFREP_LIMITS.maxBody + 1}\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => resolve({ text, closed: true }));
    });
    assert.match(refused.text, /^HTTP\/1\.1 413 /);
    // A body that comes in pieces (headers first, the body once the server asked for it) is read whole.
    const pieces = await new Promise<string>((resolve) => {
      const socket = connect(sc.port, '127.0.0.1', () =>
        socket.write(`POST ${path} HTTP/1.1\r\nhost: a\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (text.startsWith('HTTP/1.1 100 ') && text.endsWith('\r\n\r\n') && !text.includes('200 OK')) {
          text = '';
          socket.write(body.slice(0, 10));
          setImmediate(() => socket.write(body.slice(10)));
        } else if (text.includes('"metadata"')) {
          socket.destroy();
          resolve(text);
        }
      });
    });
    assert.match(pieces, /^HTTP\/1\.1 200 /);
    assert.deepEqual(JSON.parse(pieces.slice(pieces.indexOf('\r\n\r\n') + 4)), expected);
    const badKey = await rawRequest(sc.port, { method: 'POST', target: '/ofrep/v1/evaluate/flags/%ZZ', headers: { authorization: `Bearer ${TOKEN}` }, body });
    assert.deepEqual([badKey.status, JSON.parse(badKey.body.toString()).error.code], [400, 'bad_request']);
    // No body at all: the context is empty (and `server` this sidecar's id).
    const empty = await rawRequest(sc.port, { method: 'POST', target: path, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.deepEqual([empty.status, JSON.parse(empty.body.toString()).reason], [200, 'DEFAULT']);
  } finally {
    await sc.close();
  }
});

test('OFREP single flag: an answer is serialised once per outcome and bundle version, byte for byte what a fresh serialisation gives', () => {
  const set = new FlagSet({ ...DEFAULT_BUNDLE, version: 3, flags: FLAGS });
  const prices = FLAGS!.prices!;
  const outcome = { ok: true, value: prices.value, variant: 'default', reason: 'STATIC' } as const;
  const first = set.answer('prices', outcome);
  assert.equal(first.toString(), JSON.stringify({ key: 'prices', value: { ak: 1200 }, reason: 'STATIC', variant: 'default', metadata: { bundleVersion: 3 } }));
  assert.equal(set.answer('prices', { ...outcome }), first, 'the same outcome is the same bytes');
  // Another outcome of the same flag, then another version: each answer says what it is.
  const rule = set.answer('prices', { ok: true, value: { ak: 900 }, variant: 'sale', reason: 'TARGETING_MATCH' });
  assert.equal(JSON.parse(rule.toString()).variant, 'sale');
  set.set({ ...DEFAULT_BUNDLE, version: 4, flags: FLAGS });
  assert.equal(JSON.parse(set.answer('prices', outcome).toString()).metadata.bundleVersion, 4);
});

test('OFREP bulk: every flag, an ETag of the answer and 304 when it matches; a per-flag failure stays in the list', async () => {
  const sc = await sidecarWith(FLAGS);
  try {
    const first = await post(sc.url, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'p1', map: 'chernarus' } });
    assert.equal(first.status, 200);
    assert.deepEqual(
      first.body.flags.map((f: { key: string }) => f.key),
      ['double_xp', 'zombie_density', 'motd', 'prices'],
    );
    assert.deepEqual(first.body.metadata, { bundleVersion: 9 });
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await post(sc.url, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'p1', map: 'chernarus' } }, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    const other = await post(sc.url, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'p1', map: 'livonia' } }, { 'if-none-match': etag });
    assert.equal(other.status, 200);
    const noKey = await post(sc.url, '/ofrep/v1/evaluate/flags', {});
    assert.deepEqual(
      noKey.body.flags.find((f: { key: string }) => f.key === 'motd'),
      { key: 'motd', errorCode: 'TARGETING_KEY_MISSING', errorDetails: 'flag motd splits by percentage and the context has no targetingKey' },
    );
    const parse = await post(sc.url, '/ofrep/v1/evaluate/flags', '[');
    assert.deepEqual([parse.status, parse.body.errorCode], [400, 'PARSE_ERROR']);
  } finally {
    await sc.close();
  }
});

test('the OpenFeature SDK with the OFREP provider reads the flags, with TYPE_MISMATCH and FLAG_NOT_FOUND as the SDK reports them', async () => {
  const sc = await sidecarWith(FLAGS);
  try {
    const domain = `ofrep-${Math.random()}`;
    await OpenFeature.setProviderAndWait(domain, new OFREPProvider({ baseUrl: sc.url, headers: { Authorization: `Bearer ${TOKEN}` } }));
    const client = OpenFeature.getClient(domain);
    assert.equal(await client.getBooleanValue('double_xp', false, { targetingKey: 'p1', map: 'chernarus' }), true);
    assert.equal(await client.getNumberValue('zombie_density', 0), 1.5);
    assert.deepEqual(await client.getObjectValue('prices', {}), { ak: 1200 });
    const mismatch = await client.getStringDetails('zombie_density', 'fallback');
    assert.deepEqual([mismatch.value, mismatch.errorCode], ['fallback', ErrorCode.TYPE_MISMATCH]);
    const missing = await client.getBooleanDetails('nope', true);
    assert.deepEqual([missing.value, missing.errorCode], [true, ErrorCode.FLAG_NOT_FOUND]);
    await OpenFeature.clearProviders();
  } finally {
    await sc.close();
  }
});

test('a flag changed by a publish is read by the SDK as soon as the push applied it', async () => {
  const s = await stack();
  try {
    await s.publish((b) => (b.flags = { double_xp: { type: 'boolean', value: false } }));
    const { sidecar, logger } = await s.start({ pollMs: 3_600_000 }, undefined);
    const domain = `push-${Math.random()}`;
    await OpenFeature.setProviderAndWait(domain, new OFREPProvider({ baseUrl: sidecar.url }));
    const client = OpenFeature.getClient(domain);
    assert.equal(await client.getBooleanValue('double_xp', true), false);
    while (((await (await fetch(`${sidecar.url}/status`)).json()) as any).controlPlane.path !== 'live') await new Promise((r) => setImmediate(r));
    // Polling is an hour away: the push alone brings the flip.
    const reached = logger.next((l) => l.message === 'bundle reached every brain' && l.fields.version === 3);
    await s.publish((b) => (b.flags.double_xp.value = true));
    await reached;
    assert.equal(await client.getBooleanValue('double_xp', false), true);
    await OpenFeature.clearProviders();
  } finally {
    await s.stop();
  }
});
