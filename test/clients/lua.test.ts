import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { jsonOf, MALFORMED_REPLIES_FIXTURE, malformedExpected, PERCEPTION_FIXTURE, repliesFixture, REPLIES_FIXTURE, TICKS_FIXTURE } from './helpers.js';
import { client, driver, skip, skipCjson } from './lua-client.js';
import { clientFixtureSuite } from './suite.js';

if (skip) console.log(`# Lua client tests skipped: ${skip}`);
else if (skipCjson) console.log(`# Lua runtime-decoder test skipped: ${skipCjson}`);
clientFixtureSuite(client);

test('lua client: parses the fixture reply with a runtime decoder injected too', { skip: skipCjson ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('parse', REPLIES_FIXTURE, 'cjson')), repliesFixture().expected);
});

test('lua client: late replies are dropped, the last intents kept, a silent sidecar not flooded', { skip: skip ?? false }, async () => {
  const out = jsonOf(await driver('schedule', TICKS_FIXTURE));
  assert.deepEqual(out.trace, ['sent', 'waiting', 'sent', 'sent', 'sent', 'sent', 'sent', 'sent', 'busy', 'sent']);
  // The reply to the first batch came after the second was sent: dropped, "crouched" stays;
  // a 503 and three calls with no answer at all keep it too.
  assert.deepEqual(out.postures, ['crouched', 'crouched', 'crouched']);
  assert.deepEqual(out.errors, ['internal', 'timeout', 'timeout', 'timeout']);
  assert.deepEqual(out.stats, { sent: 8, applied: 1, stale: 1, failed: 4, waiting: 1, busy: 1 });
  assert.equal(out.gathered, 8, 'perception is gathered only for batches that go out');
  assert.equal(out.url, 'http://sidecar.invalid/ticks?errors=body&token=a%20b%26c');
});

test('lua client: a misspelt or missing option is refused at construction, naming the fix', { skip: skip ?? false }, async () => {
  const out = jsonOf(await driver('options'));
  assert.match(out.typo, /unknown option 'tokenForm' \(did you mean 'token_form'\?\)/);
  assert.match(out.form, /token_form must be bearer, header or query/);
  assert.match(out.nohttp, /opts\.http \(an HTTP function\) is required/);
  assert.equal(out.fine, 'ok');
});

test('lua perception: the registry fixture (radius, nearest first, raycast budget, reuse, removal)', { skip: skip ?? false }, async () => {
  const fixture = JSON.parse(readFileSync(PERCEPTION_FIXTURE, 'utf8')) as { steps: { op: string; expect?: unknown; raycasts?: number }[] };
  const frames = jsonOf(await driver('perception', PERCEPTION_FIXTURE)) as { targets: Record<string, unknown>; raycasts: number }[];
  const expected = fixture.steps.filter((s) => s.op === 'frame');
  assert.equal(frames.length, expected.length);
  expected.forEach((want, i) => {
    assert.deepEqual(frames[i]!.targets, want.expect, `frame ${i}`);
    assert.equal(frames[i]!.raycasts, want.raycasts, `frame ${i} raycasts`);
  });
});

test(
  'lua client: a refusal answered 200 with an error body (?errors=body), or a bodiless 401, is a failure with its code',
  { skip: skip ?? false },
  async () => {
    const out = jsonOf(await driver('errorbody', TICKS_FIXTURE));
    assert.deepEqual(out.errors, [
      { status: 200, code: 'unauthorized', message: 'The X-Brain-Token header is not valid.' },
      { status: 401, code: 'unauthorized', message: 'HTTP 401' },
    ]);
    assert.equal(out.stats.failed, 2);
    assert.equal(out.stats.applied, 0);
    assert.match(
      out.logged[0],
      /^\[brainstem\] call failed: unauthorized: The X-Brain-Token header is not valid\. \(the token is wrong or missing: use the "brain token" that `brainstem up` prints/,
    );
  },
);

test('lua client: an answer that is not the reply to the batch fails the call with its code and applies nothing', { skip: skip ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('malformed', MALFORMED_REPLIES_FIXTURE, TICKS_FIXTURE)), malformedExpected());
});

test('lua client: the same with a runtime decoder injected', { skip: skipCjson ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('malformed', MALFORMED_REPLIES_FIXTURE, TICKS_FIXTURE, 'cjson')), malformedExpected());
});
