import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signingVectors } from '../helpers/signing-vectors.js';
import { clientsDir, jsonOf, MALFORMED_REPLIES_FIXTURE, malformedExpected, PERCEPTION_FIXTURE, TICKS_FIXTURE } from './helpers.js';
import { client, driver, skip } from './csharp-client.js';
import { clientFixtureSuite } from './suite.js';

if (skip) console.log(`# C# client tests skipped: ${skip}`);
clientFixtureSuite(client);

test('c# client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(clientsDir, 'csharp', 'README.md'), 'utf8');
  assert.ok(readme.includes(signingVectors()[0]!.signature));
  assert.ok(readme.includes(`FromUnixTimeSeconds(${signingVectors()[0]!.timestamp})`));
});

test('c# perception: the registry fixture (radius, nearest first, raycast budget, reuse, removal)', { skip: skip ?? false }, async () => {
  const fixture = JSON.parse(readFileSync(PERCEPTION_FIXTURE, 'utf8')) as { steps: { op: string; expect?: unknown; raycasts?: number }[] };
  const frames = jsonOf(await driver('perception', PERCEPTION_FIXTURE)) as { targets: Record<string, unknown>; raycasts: number }[];
  const expected = fixture.steps.filter((s) => s.op === 'frame');
  assert.equal(frames.length, expected.length);
  expected.forEach((want, i) => {
    assert.deepEqual(frames[i]!.targets, want.expect, `frame ${i}`);
    assert.equal(frames[i]!.raycasts, want.raycasts, `frame ${i} raycasts`);
  });
});

test('c# client: an answer that is not the reply to the batch fails the call with its code and applies nothing', { skip: skip ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('malformed', MALFORMED_REPLIES_FIXTURE, TICKS_FIXTURE)), malformedExpected());
});
