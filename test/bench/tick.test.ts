import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseTickRequest } from '../../brain/index.js';
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
