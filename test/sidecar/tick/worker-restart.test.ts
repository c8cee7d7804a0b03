import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { DEFAULT_BUNDLE } from '../../../brain/index.js';
import { PoolEvaluator } from '../../../src/sidecar/tick/pool.js';
import { fullTick } from '../helpers.js';
import { parseTickRequest } from '../../../brain/index.js';

test('a worker thread that dies is replaced, gets the bundle again, and ticks keep being answered', async () => {
  const evaluator = new PoolEvaluator(DEFAULT_BUNDLE, 1);
  try {
    const parsed = parseTickRequest(fullTick(4));
    assert.ok(parsed.ok);
    assert.equal((await evaluator.tick(parsed.request)).agent, 4);
    // Reach the one thread of the shard's pool: there is no public way to kill it.
    const pool = (evaluator as unknown as { shards: { pool: { threads: Worker[] } }[] }).shards[0]!.pool;
    const thread = pool.threads[0]!;
    const exited = once(thread, 'exit');
    await thread.terminate();
    await exited;
    const again = await evaluator.tick(parsed.request);
    assert.equal(again.agent, 4);
    const telemetry = await evaluator.drain();
    assert.equal(typeof telemetry.agents, 'number');
  } finally {
    await evaluator.close();
  }
});
