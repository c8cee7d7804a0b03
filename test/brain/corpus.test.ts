import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';
import { corpusDigests } from '../../bench/sim/corpus.js';

/**
 * Every reply of the replay corpus (every scenario file but the 50-agent crowd, which
 * test/sim/scenarios.test.ts replays whole; the standard believability runs at a small scale;
 * the `bench brain` traffic under every policy set) byte for byte as recorded.
 * A change meant to alter behaviour re-records the fixture with BRAINSTEM_RECORD_CORPUS=1 and
 * says so in its commit; any other change must leave it as it is.
 */
const FIXTURE = join(repoRoot, 'test', 'fixtures', 'brain', 'corpus.json');

test('every reply of the recorded corpus is byte-identical', async () => {
  const got = await corpusDigests();
  if (process.env.BRAINSTEM_RECORD_CORPUS === '1') writeFileSync(FIXTURE, `${JSON.stringify(got, null, 2)}\n`);
  const want = JSON.parse(readFileSync(FIXTURE, 'utf8')) as typeof got;
  assert.deepEqual(got, want);
});
