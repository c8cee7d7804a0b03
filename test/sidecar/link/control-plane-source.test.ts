import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { BUNDLE_KEY_ID_HEADER, BUNDLE_SIGNATURE_HEADER, newKeyPair, signBundle } from '../../../src/signing/bundle.js';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { DEFAULT_BUNDLE, type ConfigBundle } from '../../../brain/index.js';
import { ControlPlaneClient } from '../../../src/sidecar/link/control-plane-client.js';
import { ControlPlaneSource } from '../../../src/sidecar/link/control-plane-source.js';
import { LatencyHistogram } from '../../../src/sidecar/tick/histogram.js';
import { TelemetryBuffer } from '../../../src/sidecar/link/telemetry-buffer.js';
import { TelemetryPusher } from '../../../src/sidecar/link/telemetry-push.js';
import type { SidecarTelemetry } from '../../../src/sidecar/service.js';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { tempDir } from '../../helpers/paths.js';
import { BURST_LIMITS, serverWithKey } from '../../controlplane/helpers.js';
import { quietTelemetry } from '../helpers.js';
import { runConfigSourceSuite } from '../config/config-source.case.js';

// The shared suite pulls with one key far more often than a sidecar's 120 a minute: raised here.
const cp = await startTestServer({ limits: BURST_LIMITS });
const session = await tenantSession(cp);
after(() => cp.stop());

const shared = await serverWithKey(cp, session.token, 'suite');
runConfigSourceSuite('ControlPlaneSource', () => {
  const dir = tempDir();
  const client = new ControlPlaneClient({ url: cp.url, serverId: String(shared.serverId), key: shared.key });
  return { source: new ControlPlaneSource({ client, stateDir: dir.path }), dispose: dir.dispose };
});

/** The fake control planes sign like the real one, with a key the sources are given (--bundle-key). */
const TEST_KEY = newKeyPair();
function signedBy(body: string, serverId: string): Record<string, string> {
  return { [BUNDLE_KEY_ID_HEADER]: TEST_KEY.keyId, [BUNDLE_SIGNATURE_HEADER]: signBundle(TEST_KEY.privatePem, serverId, body) };
}

test('a bundle that fails validation is refused once, the last good one stays, and the next valid one is applied', async () => {
  const good: ConfigBundle = { ...DEFAULT_BUNDLE, version: 2 };
  const invalid = { ...DEFAULT_BUNDLE, version: 3, flavor: { ...DEFAULT_BUNDLE.flavor, themes_per_bot: 99 } };
  const fixed: ConfigBundle = { ...DEFAULT_BUNDLE, version: 4 };
  const answers: unknown[] = [good, invalid, invalid, fixed];
  const seen: (string | undefined)[] = [];
  const fake = createServer((req, res) => {
    seen.push(req.headers['if-none-match']);
    const next = answers.shift() ?? fixed;
    const body = JSON.stringify(next);
    res.writeHead(200, { 'content-type': 'application/json', etag: `"v${(next as ConfigBundle).version}"`, ...signedBy(body, '9') });
    res.end(body);
  }).listen(0, '127.0.0.1');
  await once(fake, 'listening');
  const dir = tempDir();
  const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const source = new ControlPlaneSource({
    client: new ControlPlaneClient({ url, serverId: '9', key: 'bsk_x' }),
    stateDir: dir.path,
    pollMs: 3_600_000,
    push: false,
    bundleKey: TEST_KEY.publicKey,
  });
  try {
    const applied: number[] = [];
    const first = await source.start((b) => applied.push(b.version));
    assert.equal(first.version, 2);
    await source.pollNow();
    assert.equal(source.status().version, 2);
    assert.match(source.status().lastError ?? '', /themes_per_bot/);
    assert.match(source.pullStatus().lastPull?.outcome ?? '', /^error: invalid bundle/);
    await source.pollNow();
    await source.pollNow();
    assert.deepEqual(applied, [4]);
    assert.deepEqual(source.status(), { version: 4, source: 'control-plane', location: url, lastError: null, lastErrorSince: null });
    assert.deepEqual(seen, [undefined, '"v2"', '"v2"', '"v2"']);
  } finally {
    await source.stop();
    fake.close();
    dir.dispose();
  }
});

test('an unreachable control plane at start: built-in defaults (no disk copy) within the startup timeout', async () => {
  const dir = tempDir();
  const client = new ControlPlaneClient({ url: 'http://127.0.0.1:1', serverId: '1', key: 'bsk_x' });
  const source = new ControlPlaneSource({ client, stateDir: dir.path, startupTimeoutMs: 500, pollMs: 3_600_000 });
  try {
    const bundle = await source.start(() => {});
    assert.equal(bundle, DEFAULT_BUNDLE);
    assert.equal(source.status().source, 'defaults');
    assert.match(source.pullStatus().lastPull?.outcome ?? '', /^error: unreachable/);
  } finally {
    await source.stop();
    dir.dispose();
  }
});

function counts(events: Record<string, number>): SidecarTelemetry {
  return quietTelemetry({ events });
}

test('a report whose 202 is lost is resent with the same reportId and counted once', async () => {
  const sc = await serverWithKey(cp, session.token, 'lost-202');
  let lose = 1;
  const flaky: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === 'POST' && lose-- > 0) {
      await res.text();
      throw new TypeError('fetch failed: connection reset after the request was sent');
    }
    return res;
  };
  const dir = tempDir();
  const buffer = new TelemetryBuffer(dir.path);
  await buffer.load();
  const client = new ControlPlaneClient({ url: cp.url, serverId: String(sc.serverId), key: sc.key, fetch: flaky });
  const batches = [counts({ spawn: 3, snap: 5 }), counts({ snap: 1 })];
  const pusher = new TelemetryPusher({
    client,
    buffer,
    collect: async () => batches.shift() ?? counts({}),
    latency: new LatencyHistogram(),
    intervalMs: 3_600_000,
    minBackoffMs: 10,
    maxBackoffMs: 10,
  });
  try {
    await pusher.report();
    await pusher.flush();
    assert.equal(buffer.size, 1);
    assert.match(pusher.status().lastPush?.outcome ?? '', /^error: unreachable/);
    await pusher.report(); // the second report waits behind the first
    await new Promise((r) => setTimeout(r, 50));
    await pusher.flush();
    assert.equal(buffer.size, 0);
    assert.equal(pusher.status().lastPush?.outcome, 'ok');
    const activity = await cp.call('GET', `/v1/servers/${sc.serverId}/activity?limit=50`, { token: session.token });
    const total = (kind: string) => (activity.body as { kind: string; count: number }[]).filter((e) => e.kind === kind).reduce((n, e) => n + e.count, 0);
    assert.equal(total('spawn'), 3);
    assert.equal(total('snap'), 6);
  } finally {
    await pusher.close(100);
    dir.dispose();
  }
});

test('401/403/5xx/429 never stop the pulls: the last good bundle stays, /status says why and since when, and a resumed tenant is picked up', async () => {
  const v1: ConfigBundle = { ...DEFAULT_BUNDLE, version: 1 };
  const v2: ConfigBundle = { ...DEFAULT_BUNDLE, version: 2 };
  const error = (status: number, code: string) => ({ status, body: { error: { code, message: `${code} for the test` } } });
  const answers: { status: number; body: unknown; headers?: Record<string, string> }[] = [
    { status: 200, body: v1 },
    error(403, 'tenant_suspended'),
    error(403, 'tenant_suspended'),
    error(401, 'unauthorized'),
    error(503, 'unavailable'),
    { ...error(429, 'rate_limited'), headers: { 'retry-after': '0' } },
    { status: 200, body: v2 },
  ];
  const fake = createServer((_req, res) => {
    const next = answers.shift() ?? { status: 304, body: null };
    const body = next.body === null ? undefined : JSON.stringify(next.body);
    res.writeHead(next.status, {
      'content-type': 'application/json',
      ...(next.status === 200 ? { etag: `"v${(next.body as ConfigBundle).version}"`, ...signedBy(body!, '9') } : {}),
      ...next.headers,
    });
    res.end(body);
  }).listen(0, '127.0.0.1');
  await once(fake, 'listening');
  const dir = tempDir();
  const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const lines: string[] = [];
  const logger = { info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
  let clock = Date.parse('2026-11-26T08:00:00Z');
  const source = new ControlPlaneSource({
    client: new ControlPlaneClient({ url, serverId: '9', key: 'bsk_x' }),
    stateDir: dir.path,
    pollMs: 3_600_000,
    push: false,
    bundleKey: TEST_KEY.publicKey,
    maxBackoffMs: 5_000,
    logger,
    now: () => clock,
  });
  try {
    const applied: number[] = [];
    assert.equal((await source.start((b) => applied.push(b.version))).version, 1);
    await source.pollNow();
    assert.match(source.status().lastError ?? '', /refused the server key \(403 tenant_suspended/);
    assert.equal(source.status().lastErrorSince, '2026-11-26T08:00:00.000Z');
    assert.equal(source.pullStatus().lastPull?.outcome, 'unauthorized');
    clock += 60_000;
    for (let k = 0; k < 4; k++) await source.pollNow();
    // Still the first failure's time: the trouble has lasted since then.
    assert.equal(source.status().lastErrorSince, '2026-11-26T08:00:00.000Z');
    assert.equal(source.pullStatus().consecutiveErrors, 5);
    assert.equal(source.status().version, 1);
    // The timer keeps running, its wait capped by maxBackoffMs.
    const next = Date.parse(source.pullStatus().nextPullAt ?? '');
    assert.ok(next > clock && next <= clock + 5_000, String(source.pullStatus().nextPullAt));
    await source.pollNow();
    assert.deepEqual(applied, [2]);
    assert.equal(source.status().lastError, null);
    assert.equal(source.status().lastErrorSince, null);
    assert.equal(source.pullStatus().consecutiveErrors, 0);
    // Logged when the reason changed, not on every retry; never "unreachable" for a refused key.
    assert.deepEqual(lines.filter((l) => l.includes('refused the server key')).length, 2);
    assert.ok(lines.some((l) => l.startsWith('info config pull works again')));
    assert.ok(!lines.some((l) => l.includes('unreachable')));
  } finally {
    await source.stop();
    fake.close();
    dir.dispose();
  }
});

test('a refused key at start is logged as such, not as an unreachable control plane', async () => {
  const fake = createServer((_req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'The server key is not valid.' } }));
  }).listen(0, '127.0.0.1');
  await once(fake, 'listening');
  const dir = tempDir();
  const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const lines: string[] = [];
  const logger = {
    info: () => {},
    warn: (m: string, f?: object) => lines.push(`${m} ${JSON.stringify(f)}`),
    error: (m: string, f?: object) => lines.push(`${m} ${JSON.stringify(f)}`),
  };
  const source = new ControlPlaneSource({
    client: new ControlPlaneClient({ url, serverId: '9', key: 'bsk_wrong' }),
    stateDir: dir.path,
    pollMs: 3_600_000,
    logger,
  });
  try {
    await source.start(() => {});
    assert.equal(source.status().source, 'defaults');
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^config pull failed at start and no bundle on disk; running the built-in defaults.*refused the server key \(401 unauthorized: The server key is not valid/,
    );
    assert.ok(!lines[0]!.includes('unreachable'));
    assert.ok(!lines[0]!.includes('bsk_wrong'));
  } finally {
    await source.stop();
    fake.close();
    dir.dispose();
  }
});

test("a telemetry report carries the dialogue tier's economy split: {ttsUsd, llmUsd, cacheHits}", async () => {
  const dir = tempDir();
  const buffer = new TelemetryBuffer(dir.path);
  await buffer.load();
  const pusher = new TelemetryPusher({
    client: new ControlPlaneClient({ url: 'http://127.0.0.1:1', serverId: '3', key: 'bsk_x' }),
    buffer,
    collect: async () => counts({}),
    latency: new LatencyHistogram(),
    intervalMs: 3_600_000,
  });
  try {
    const report = pusher.build({ ...counts({ spoke: 4 }), linesSpoken: 4, cacheHits: 1, spendUsd: 0.1 + 0.2, llmUsd: 0.1, ttsUsd: 0.2 });
    assert.deepEqual(report.economy, { ttsUsd: 0.2, llmUsd: 0.1, cacheHits: 1 });
    assert.equal(report.spendUsd, 0.3);
  } finally {
    dir.dispose();
  }
});
