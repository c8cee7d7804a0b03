import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { DEFAULT_BUNDLE } from '../../../brain/index.js';
import { repoRoot, tempDir } from '../../helpers/paths.js';
import { post, startTest } from '../helpers.js';
import { RecentAgents } from '../../../src/sidecar/state/players.js';

const cli = join(repoRoot, 'bin', 'brainstem');

interface Reply {
  intents: Array<{ kind: string; at?: { x: number; y: number; z: number } }>;
}

function snapshot(agent: number, time: number, health: number, hostile: boolean): Record<string, unknown> {
  return {
    snapshot: {
      agent,
      time_s: time,
      self_state: { pos: { x: 0, y: 0, z: 0 }, heading_deg: 0, health, blood: 5000, hunger: 10, thirst: 10, has_weapon: true, ammo: 30 },
      targets: hostile ? [{ id: 66, kind: 'ai', pos: { x: 30, y: 0, z: 10 }, hostile: true, visible: true }] : [],
    },
  };
}

/** A sidecar on the bundle directory `dir`, run from the working directory `cwd`. */
async function start(dir: string, workers: string, cwd: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [cli, 'sidecar', '--addr', '127.0.0.1:0', '--bundle', dir, '--workers', workers], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BRAINSTEM_LOG: 'silent', SERVICE_BRAIN_TOKEN: '', SERVICE_LLM_BASE_URL: '', SERVICE_LLM_MODEL: '' },
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const url = /(http:\/\/\S+)/.exec(line)?.[1];
  assert.ok(url, `no URL in "${line}"`);
  assert.match(line, /state .*\.brainstem\/brain-state\.json/);
  return { child, url };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  return ((await exited) as [number | null])[0];
}

async function tick(url: string, body: Record<string, unknown>): Promise<Reply> {
  const res = await post(url, body);
  assert.equal(res.status, 200);
  return res.json() as Reply;
}

for (const workers of ['0', '2']) {
  test(`brain memory survives a SIGTERM and restart (--workers ${workers})`, async () => {
    const tmp = tempDir('brainstem-state-');
    // The bundle directory is read-only: the state goes under the working directory.
    const dir = join(tmp.path, 'bundle');
    mkdirSync(dir);
    writeFileSync(join(dir, 'bundle.json'), JSON.stringify(DEFAULT_BUNDLE));
    chmodSync(dir, 0o555);
    let { child, url } = await start(dir, workers, tmp.path);
    try {
      // Agent 5 sees a hostile at (30, 0, 10); agent 6 never does.
      await tick(url, snapshot(5, 100, 100, true));
      await tick(url, snapshot(6, 100, 100, false));
      assert.equal(await stop(child), 0);
      const file = join(tmp.path, '.brainstem', 'brain-state.json');
      assert.ok(existsSync(file), 'the state is written on shutdown');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(file)).mode & 0o777, 0o700);
      assert.deepEqual(readdirSync(dir), ['bundle.json']);
      assert.deepEqual((JSON.parse(readFileSync(file, 'utf8')) as { agents: { id: number }[] }).agents.map((a) => a.id).sort(), [5, 6]);
      ({ child, url } = await start(dir, workers, tmp.path));
      // Wounded, the hostile gone: only a character that remembers the contact goes to look.
      const remembered = await tick(url, snapshot(5, 110, 40, false));
      const investigate = remembered.intents.find((i) => i.kind === 'Investigate');
      assert.deepEqual(investigate?.at, { x: 30, y: 0, z: 10 }, JSON.stringify(remembered));
      const fresh = await tick(url, snapshot(6, 110, 40, false));
      assert.ok(!fresh.intents.some((i) => i.kind === 'Investigate'));
    } finally {
      if (child.exitCode === null) assert.equal(await stop(child), 0);
      chmodSync(dir, 0o755);
      tmp.dispose();
    }
  });
}

test('a bad state file is logged and ignored, never fatal; saveState rewrites it', async () => {
  const tmp = tempDir('brainstem-state-');
  const file = join(tmp.path, 'state.json');
  writeFileSync(file, '{"format":"brainstem.brain-state","version":1,"agents":[{"id":"x"}]}');
  const warnings: string[] = [];
  const logger = { info() {}, error() {}, warn: (m: string) => void warnings.push(m) };
  const s = await startTest({ stateFile: file, logger });
  try {
    assert.deepEqual(warnings, ['brain state file ignored; starting with fresh memory']);
    assert.equal((await post(s.url, snapshot(1, 5, 100, true))).status, 200);
    await s.saveState();
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { format: string; agents: { id: number }[] };
    assert.equal(saved.format, 'brainstem.brain-state');
    assert.deepEqual(
      saved.agents.map((a) => a.id),
      [1],
    );
  } finally {
    await s.close();
  }
  writeFileSync(file, 'not json');
  const again = await startTest({ stateFile: file, logger });
  await again.close();
  assert.equal(warnings.length, 2);
  tmp.dispose();
});

test('the roster keeps only characters ticked in the last one to two windows (RecentAgents)', () => {
  const recent = new RecentAgents(60_000);
  recent.add(1);
  recent.add(2);
  recent.rotate();
  recent.add(2);
  assert.equal(recent.has(1), true, 'ticked in the previous window');
  recent.rotate();
  assert.equal(recent.has(1), false, 'not ticked for two windows: off the roster');
  assert.equal(recent.has(2), true);
  assert.equal(recent.has(3), false);
});
