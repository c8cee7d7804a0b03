import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenFeature, ErrorCode } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { DEFAULT_BUNDLE, type ConfigBundle } from '../../brain/index.js';
import { startSidecar, type Sidecar } from '../../src/sidecar/service.js';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { OFREP_LIMITS } from '../../src/sidecar/flags/ofrep.js';
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
