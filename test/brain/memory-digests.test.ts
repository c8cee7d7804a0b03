import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as brain from '../../brain/index.js';
import { fixtures } from '../helpers/paths.js';
import { memoryDigests } from '../helpers/memory-traffic.js';

/**
 * What memory lets out (persona(), the state export) pinned beside every reply, as the replay
 * corpus pins replies (test/brain/corpus.test.ts): an optimisation of how memory is stored or
 * written must leave every digest as it is. test/fixtures/brain/memory-digests.json was
 * recorded by main at 218e4d7, on traffic that reads only at the end and traffic that reads
 * every few ticks, with player names on and off, more targets than any ring holds, clock
 * resets, staleness, export/import round trips and the policy switched off and on
 * (test/helpers/memory-traffic.ts). A change meant to alter memory re-records it with
 * BRAINSTEM_RECORD_CORPUS=1 and says so in its commit.
 */
const FIXTURE = join(fixtures, 'brain', 'memory-digests.json');

test('replies, personas and state exports of the memory traffic are byte-identical to the recorded ones', () => {
  const got = memoryDigests(brain);
  if (process.env.BRAINSTEM_RECORD_CORPUS === '1') writeFileSync(FIXTURE, `${JSON.stringify(got, null, 2)}\n`);
  const want = JSON.parse(readFileSync(FIXTURE, 'utf8')) as typeof got;
  assert.deepEqual(got, want);
});
