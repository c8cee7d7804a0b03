import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { generateTicks } from '../../bench/tick/scenarios.js';
import { cli } from '../helpers/paths.js';
import { Brain, DEFAULT_BUNDLE, parseTickRequest } from '../../brain/index.js';
import { post, postTo, startTest, type Enc } from './helpers.js';

// Squads spanning agents: their members must see one another's ticks in the same order
// whether evaluated inline or on worker shards.
const TICKS = generateTicks({ agents: 12, count: 120, seed: 42 }).map((t) => {
  const snapshot = t.snapshot as { agent: number; squad?: string };
  if (snapshot.agent % 4 !== 0) snapshot.squad = `squad_${snapshot.agent % 3}`;
  else delete snapshot.squad;
  return t;
});

/** Sends the sequence in order and returns every reply's bytes as hex. */
async function replay(url: string, enc: Enc): Promise<string[]> {
  const out: string[] = [];
  for (const tick of TICKS) {
    const r = await post(url, tick, enc);
    assert.equal(r.status, 200, r.bytes.toString());
    out.push(r.bytes.toString('hex'));
  }
  return out;
}

async function replayIn(workers: number, enc: Enc): Promise<string[]> {
  const s = await startTest({ workers });
  try {
    return await replay(s.url, enc);
  } finally {
    await s.close();
  }
}

test('the same tick sequence gives byte-identical replies inline and with 1 or 2 workers', async () => {
  for (const enc of ['json', 'msgpack'] as const) {
    const inline = await replayIn(0, enc);
    assert.deepEqual(await replayIn(1, enc), inline, `${enc}: 1 worker differs from inline`);
    assert.deepEqual(await replayIn(2, enc), inline, `${enc}: 2 workers differ from inline`);
  }
});

test('concurrent ticks of many agents are all answered by the worker shards, each with its own agent', async () => {
  const s = await startTest({ workers: 2 });
  try {
    const replies = await Promise.all(TICKS.slice(0, 60).map((t) => post(s.url, t)));
    replies.forEach((r, i) => {
      assert.equal(r.status, 200);
      assert.equal((r.json() as { agent: number }).agent, (TICKS[i]!.snapshot as { agent: number }).agent);
    });
    const telemetry = await s.evaluator.drain();
    assert.equal(typeof telemetry.agents, 'number');
    assert.ok(Array.isArray(telemetry.roster));
    assert.equal(typeof telemetry.events, 'object');
  } finally {
    await s.close();
  }
});

async function spawnSidecar(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  // No memory file: each process starts fresh, so the replies can be compared.
  const child = spawn(process.execPath, [cli, 'sidecar', '--addr', '127.0.0.1:0', '--state', '', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BRAINSTEM_LOG: 'silent', SERVICE_BRAIN_TOKEN: '' },
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const url = /(http:\/\/\S+)/.exec(line)?.[1];
  assert.ok(url, `no URL in "${line}"`);
  return { child, url };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  return code;
}

test('bin/brainstem sidecar replies identically across process restarts and exits cleanly on SIGTERM', async () => {
  const expected = await replayIn(0, 'json');
  for (const workers of ['0', '2']) {
    const { child, url } = await spawnSidecar(['--workers', workers]);
    try {
      const health = await fetch(`${url}/health`);
      assert.equal(await health.text(), 'ok');
      assert.deepEqual(await replay(url, 'json'), expected, `process with --workers ${workers} differs`);
    } finally {
      assert.equal(await stop(child), 0);
    }
  }
});

test('the CLI reads SERVICE_BRAIN_TOKEN and --token overrides it', async () => {
  const child = spawn(process.execPath, [cli, 'sidecar', '--addr', '127.0.0.1:0', '--state', '', '--token', 'from-flag'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BRAINSTEM_LOG: 'silent', SERVICE_BRAIN_TOKEN: 'from-env' },
  });
  try {
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const url = /(http:\/\/\S+)/.exec(line)![1]!;
    assert.equal((await post(url, TICKS[0], 'json', { authorization: 'Bearer from-env' })).status, 401);
    assert.equal((await post(url, TICKS[0], 'json', { authorization: 'Bearer from-flag' })).status, 200);
  } finally {
    assert.equal(await stop(child), 0);
  }
});

test('the CLI refuses a bad --addr or --workers with one line and exit 1', async () => {
  for (const args of [
    ['--addr', 'nowhere'],
    ['--workers', '-1'],
    ['--bundle', '/nonexistent/bundle/dir'],
  ]) {
    const child = spawn(process.execPath, [cli, 'sidecar', '--addr', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 1, stderr);
    assert.match(stderr, /^brainstem: /);
  }
});

test('an idle agent is forgotten by its own clock alone: the same replies inline, with 1 or 2 workers, and from a brain that saw only its ticks', async () => {
  // Agent 1 ticks at t=0, then many other agents tick up to t=5000 (more than 1,024 ticks),
  // then agent 1 comes back at t=3000 (3,000 s by its own clock: remembered) and at t=6700
  // (3,700 s: forgotten). Squads are off so no other agent can change agent 1's replies.
  const lone = (agent: number, time: number): Record<string, unknown> => {
    const tick = TICKS[agent % TICKS.length]!;
    const snapshot: Record<string, unknown> = { ...(tick.snapshot as Record<string, unknown>), agent, time_s: time };
    delete snapshot.squad;
    return { ...tick, snapshot };
  };
  const sequence = [lone(1, 0)];
  for (let k = 0; k < 1200; k++) sequence.push(lone(2 + (k % 40), (k * 5000) / 1200));
  sequence.push(lone(1, 3000), lone(1, 3001), lone(1, 6700), lone(1, 6701));
  const mine = sequence.filter((t) => (t.snapshot as { agent: number }).agent === 1);
  const reference = new Brain(DEFAULT_BUNDLE);
  const expected = mine.map((t) => {
    const parsed = parseTickRequest(t);
    assert.ok(parsed.ok);
    return JSON.stringify(reference.tick(parsed.request));
  });
  for (const workers of [0, 1, 2]) {
    const s = await startTest({ workers });
    try {
      const r = await postTo(`${s.url}/ticks`, sequence.slice(0, 1000));
      assert.equal(r.status, 200);
      const rest = await postTo(`${s.url}/ticks`, sequence.slice(1000));
      const replies = [...(r.json() as unknown[]), ...(rest.json() as unknown[])];
      const agentOne = replies.filter((x) => (x as { agent: number }).agent === 1).map((x) => JSON.stringify(x));
      assert.deepEqual(agentOne, expected, `${workers} workers`);
    } finally {
      await s.close();
    }
  }
});
