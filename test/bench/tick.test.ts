import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BUNDLE, parseTickRequest, POLICY_KEYS, validateBundle } from '../../brain/index.js';
import { parseBrainPolicy, policyBundle } from '../../bench/tick/policy.js';
import { POLICY_ALL, POLICY_NONE, roundOrder } from '../../bench/tick/policy-compare.js';
import { startServer, stopServer } from '../../bench/tick/run.js';
import { generateTicks } from '../../bench/tick/scenarios.js';
import { cli } from '../helpers/paths.js';

test('the benchmark corpus is deterministic and every tick in it is valid', () => {
  const a = generateTicks({ agents: 50, count: 400, seed: 7 });
  assert.deepEqual(generateTicks({ agents: 50, count: 400, seed: 7 }), a);
  const agents = new Set<number>();
  for (const tick of a) {
    const r = parseTickRequest(tick);
    assert.ok(r.ok, JSON.stringify(!r.ok && r.problems));
    assert.ok(r.request.snapshot.targets.length <= 8);
    agents.add(r.request.snapshot.agent);
  }
  assert.equal(agents.size, 50);
});

test('brainstem bench tick is registered with its options', () => {
  const r = spawnSync(process.execPath, [cli, 'bench', 'tick', '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  for (const flag of ['--duration', '--rounds', '--agents', '--rate', '--json']) assert.match(r.stdout, new RegExp(flag));
});

test('bench tick --policy bundles: every key on, every key off, the default bundle untouched', () => {
  const all = policyBundle('all');
  const none = policyBundle('none');
  assert.ok(validateBundle(all).ok && validateBundle(none).ok);
  for (const key of POLICY_KEYS) {
    assert.equal(all.policy[key], true, key);
    assert.equal(none.policy[key], false, key);
  }
  assert.equal(policyBundle('default'), DEFAULT_BUNDLE);
  assert.equal(parseBrainPolicy(undefined), 'default');
  assert.throws(() => parseBrainPolicy('some'), /unknown brain policy/);
});

test('bench tick --policy compare: every round has the baselines and both policies, their order swapped each round', () => {
  const labels = (round: number) => roundOrder(round).map((r) => `${r.spec.label}|${r.encoding}`);
  assert.deepEqual(labels(1).slice(0, 4), [
    'bare uWS (constant reply)|json',
    'bare uWS (constant reply)|msgpack',
    'node:http + tick handler|json',
    'node:http + tick handler|msgpack',
  ]);
  assert.deepEqual(labels(1).slice(4), [`${POLICY_ALL.label}|json`, `${POLICY_NONE.label}|json`]);
  assert.deepEqual(labels(2).slice(4), [`${POLICY_NONE.label}|json`, `${POLICY_ALL.label}|json`]);
  assert.equal(POLICY_ALL.policy, 'all');
  assert.equal(POLICY_NONE.policy, 'none');
});

/** Starts the benchmark's server process, sends one tick, stops it and returns its telemetry line. */
async function oneTick(policy: 'all' | 'none'): Promise<{ reply: { intents: Array<{ kind: string }> }; events: Record<string, number> }> {
  const { child, port, lines } = await startServer({ label: policy, kind: 'sidecar', workers: 0, policy }, '0');
  const telemetry = new Promise<Record<string, number>>((resolve) => {
    lines.on('line', (line) => {
      const t = (JSON.parse(line) as { telemetry?: { events: Record<string, number> } }).telemetry;
      if (t) resolve(t.events);
    });
  });
  try {
    const [tick] = generateTicks({ agents: 1, count: 1, seed: 1 });
    const res = await fetch(`http://127.0.0.1:${port}/tick`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tick) });
    assert.equal(res.status, 200);
    const reply = (await res.json()) as { intents: Array<{ kind: string }> };
    await stopServer(child);
    return { reply, events: await telemetry };
  } finally {
    await stopServer(child);
  }
}

test('the benchmark server runs the sidecar with the policy it is given', async () => {
  // This first tick (seed 1) plans a goal only when global_goals is on; a spawn is counted either way.
  const [all, none] = await Promise.all([oneTick('all'), oneTick('none')]);
  assert.equal(all.events.plan, 1);
  assert.equal(none.events.plan, undefined);
  assert.equal(all.events.spawn, 1);
  assert.equal(none.events.spawn, 1);
  assert.ok(all.reply.intents.length > 0 && none.reply.intents.length > 0);
});

test('bench/tick/batch-parts measures each part of the /ticks path against the brain in paired slices', () => {
  const script = fileURLToPath(new URL('../../bench/tick/batch-parts.js', import.meta.url));
  // Two pairs of 50 ms slices after a 50 ms warm-up: the rows' shape, not their figures (the default warm-up is 1.5 s in each of 8 processes).
  const r = spawnSync(process.execPath, [script, '2', '0.05', '200', '0.05'], { encoding: 'utf8', env: { ...process.env, BENCH_CPU: '0-1' } });
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { part: string; pairs: number; vs_brain: number; q1: number; q3: number });
  assert.deepEqual(
    rows.map((row) => row.part),
    ['read', 'parse', 'build', 'pipeline'],
  );
  for (const row of rows) {
    assert.equal(row.pairs, 2);
    assert.ok(row.vs_brain > 0 && Number.isFinite(row.vs_brain), JSON.stringify(row));
    assert.ok(row.q1 <= row.vs_brain && row.vs_brain <= row.q3, JSON.stringify(row));
  }
});

test('the bare uWS baseline reads bodies sent in pieces on several connections at once and answers /ticks with 100 replies', async () => {
  const { connect } = await import('node:net');
  const { child, port } = await startServer({ label: 'uWS + JSON.parse (constant reply)', kind: 'uws-parse', workers: 0 }, '0');
  try {
    // Bodies that differ, so that a byte written into another's buffer shows.
    const bodies = [3, 4, 5, 6].map((seed) => Buffer.from(JSON.stringify(generateTicks({ agents: 200, count: 200, seed }))));
    const head = (body: Buffer): Buffer =>
      Buffer.from(`POST /ticks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    const sockets = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<import('node:net').Socket>((resolve, reject) =>
            connect(port, '127.0.0.1')
              .once('connect', function (this: import('node:net').Socket) {
                resolve(this);
              })
              .once('error', reject),
          ),
      ),
    );
    const replies = sockets.map(
      (socket) =>
        new Promise<string>((resolve, reject) => {
          let text = '';
          socket.setEncoding('utf8');
          socket.on('data', (c: string) => (text += c));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        }),
    );
    // Every client sends its head and half its body before any sends the rest: the server sees
    // the bodies interleaved, and JSON.parse would fail on a byte taken from another body.
    await Promise.all(
      sockets.map(
        (socket, k) =>
          new Promise<void>((resolve) => socket.write(Buffer.concat([head(bodies[k]!), bodies[k]!.subarray(0, bodies[k]!.length >> 1)]), () => resolve())),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    sockets.forEach((socket, k) => socket.end(bodies[k]!.subarray(bodies[k]!.length >> 1)));
    for (const text of await Promise.all(replies)) {
      assert.match(text, /^HTTP\/1\.1 200 /);
      assert.equal((JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as unknown[]).length, 100);
    }
  } finally {
    await stopServer(child);
  }
});
