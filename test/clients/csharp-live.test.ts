import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOf, run, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN } from './helpers.js';
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

test('c# client: the README example runs against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    // A generous timeout: a busy machine must not turn into a failed call.
    const r = await run('mono', [EXAMPLE, sidecar.url, TOKEN, '2', '60']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    const summary = /^sent (\d+), applied (\d+), stale (\d+), failed 0$/.exec(lines.at(-1)!);
    assert.ok(summary, r.stdout);
    assert.ok(Number(summary[2]) >= 1, 'the last batch sent is applied');
    for (const line of lines.slice(0, -1)) assert.match(line, /^agent [1-3]: (standing|crouched|prone) \[/);
    assert.equal(lines.length - 1, 3 * Number(summary[2]));
  } finally {
    await sidecar.close();
  }
});
