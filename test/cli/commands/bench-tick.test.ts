import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { batchSizesOf, tickPolicyOf } from '../../../src/cli/commands/bench-tick.js';
import { MAX_BATCH_TICKS } from '../../../src/sidecar/tick/tick-array.js';
import { CliError } from '../../../src/cli/util.js';
import { cli } from '../../helpers/paths.js';

test('bench tick --policy: accepted values, refused values and combinations, before any load is generated', async () => {
  assert.equal(await tickPolicyOf({}), undefined);
  for (const p of ['all', 'none', 'compare'] as const) assert.equal(await tickPolicyOf({ policy: p }), p);
  await assert.rejects(tickPolicyOf({ policy: 'some' }), (e: unknown) => e instanceof CliError && /--policy must be one of all, none, compare/.test(e.message));
  await assert.rejects(tickPolicyOf({ policy: 'all', micro: true }), /--policy cannot be combined with --micro/);
  await assert.rejects(tickPolicyOf({ policy: 'compare', dialogue: true }), /--policy cannot be combined with --dialogue/);
  const help = spawnSync(process.execPath, [cli, 'bench', 'tick', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--policy <all\|none\|compare>/);
  const bad = spawnSync(process.execPath, [cli, 'bench', 'tick', '--policy', 'most', '--wrk', '/nonexistent/wrk'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--policy must be one of all, none, compare, got "most"/);
});

test('bench tick --batch: sizes from 1 to the /ticks cap, refused combinations, before any load is generated', () => {
  assert.deepEqual(batchSizesOf('1,10, 100'), [1, 10, 100]);
  assert.throws(() => batchSizesOf('0'), /--batch must be/);
  assert.throws(() => batchSizesOf(`${MAX_BATCH_TICKS + 1}`), /--batch must be/);
  assert.throws(() => batchSizesOf('x'), /--batch must be/);
  const help = spawnSync(process.execPath, [cli, 'bench', 'tick', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--batch \[sizes\]/);
  const bad = spawnSync(process.execPath, [cli, 'bench', 'tick', '--batch', '10', '--micro', '--wrk', '/nonexistent/wrk'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--batch cannot be combined with --micro/);
  const noWrk = spawnSync(process.execPath, [cli, 'bench', 'tick', '--batch', '--wrk', '/nonexistent/wrk'], { encoding: 'utf8' });
  assert.equal(noWrk.status, 1);
  assert.match(noWrk.stderr, /wrk not found/);
});
