import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { clientsDir, jsonOf, readmeExampleOutput, run, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN } from './helpers.js';
import { client, driver, EXAMPLE, skip } from './csharp-client.js';
import { clientLiveSuite } from './suite.js';

if (skip) console.log(`# C# client tests skipped: ${skip}`);
clientLiveSuite({
  ...client,
  checkLive(out) {
    assert.equal(out.health, true);
  },
});

test('c# client: the cadence loop waits while a batch is out, applies its reply, then sends again', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const out = jsonOf(await driver('loop', sidecar.url, TOKEN, 'query', TICKS_FIXTURE));
    assert.deepEqual(out.trace, ['sent', 'waiting', 'sent']);
    assert.equal(out.gathered, 2, 'perception is gathered only for batches that go out');
    assert.equal(out.sent, 2);
    assert.equal(out.stale, 0);
    assert.equal(out.applied, 2 * ticksFixture().ticks.length);
    assert.deepEqual(out.errors, []);
    assert.match(out.lastPosture, /^(standing|crouched|prone)$/);
  } finally {
    await sidecar.close();
  }
});

test('c# client: the README example prints what the README shows, against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    // A generous timeout: a busy machine must not turn into a failed call.
    const r = await run('mono', [EXAMPLE, sidecar.url, TOKEN, '4', '60']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trimEnd(), readmeExampleOutput(join(clientsDir, 'csharp', 'README.md')));
  } finally {
    await sidecar.close();
  }
});

test('c# client: the example with a wrong token fails with the fix in its message', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('mono', [EXAMPLE, sidecar.url, 'not-the-token', '1', '60']);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /round 1: call failed: 401 unauthorized: .*brain token that `brainstem up` prints/);
  } finally {
    await sidecar.close();
  }
});
