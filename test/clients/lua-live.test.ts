import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { jsonOf, readmeExampleOutput, run, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN } from './helpers.js';
import { CLIENT, driver, liveClient, list, skipLive as skip } from './lua-client.js';
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

test('lua client: with ?errors=body a wrong token arrives as a 200 error body and is reported as unauthorized', { skip: skip ?? false }, async (t) => {
  const sidecar = await startTokenSidecar();
  try {
    const probe = await fetch(`${sidecar.url}/ticks?errors=body`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-brain-token': 'not-the-token' },
      body: '[]',
    });
    await probe.arrayBuffer();
    if (probe.status !== 200) {
      t.skip(`this sidecar answers ?errors=body with ${probe.status}: errors in the body are not merged yet (the mods-stack branch adds them)`);
      return;
    }
    const out = jsonOf(await driver('refused', sidecar.url, 'not-the-token', 'header', TICKS_FIXTURE));
    assert.deepEqual(out, { raised: true, status: 200, code: 'unauthorized' });
  } finally {
    await sidecar.close();
  }
});
