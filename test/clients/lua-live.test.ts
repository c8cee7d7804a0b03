import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readmeExampleOutput, run, startTokenSidecar, ticksFixture, TOKEN } from './helpers.js';
import { CLIENT, liveClient, list, skipLive as skip } from './lua-client.js';
import { clientLiveSuite } from './suite.js';

if (skip) console.log(`# Lua client tests skipped: ${skip}`);
clientLiveSuite({
  ...liveClient,
  checkLive(out) {
    assert.equal(out.result, 'sent');
    assert.deepEqual(list(out.failures), []);
    assert.equal(out.last_agent, (ticksFixture().ticks[0]!.snapshot as { agent: number }).agent);
  },
});

test('lua client: the README example prints what the README shows, against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('lua5.4', [join(CLIENT, 'example.lua'), sidecar.url, TOKEN]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trimEnd(), readmeExampleOutput(join(CLIENT, 'README.md')));
  } finally {
    await sidecar.close();
  }
});

test('lua client: a wrong token is logged by default, naming the fix', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('lua5.4', [join(CLIENT, 'example.lua'), sidecar.url, 'not-the-token', '1']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\[brainstem\] call failed: (401 )?unauthorized: .*brain token/m);
    assert.match(r.stdout, /sent 1, applied 0, stale 0, failed 1/);
  } finally {
    await sidecar.close();
  }
});
