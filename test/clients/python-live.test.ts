import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readmeExampleOutput, run, startTokenSidecar, ticksFixture, TOKEN } from './helpers.js';
import { CLIENT, client, PYTHON, skip } from './python-client.js';
import { clientLiveSuite } from './suite.js';

if (skip) console.log(`# Python client tests skipped: ${skip}`);
clientLiveSuite({
  ...client,
  checkLive(out) {
    assert.equal(out.health, true);
    assert.equal(out.single.agent, (ticksFixture().ticks[0]!.snapshot as { agent: number }).agent);
  },
});

test('python client: the README example prints what the README shows, against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    // A generous timeout: a busy machine must not turn into a failed call.
    const r = await run(PYTHON, [join(CLIENT, 'example.py'), '--url', sidecar.url, '--token', TOKEN, '--timeout', '30']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trimEnd(), readmeExampleOutput(join(CLIENT, 'README.md')));
  } finally {
    await sidecar.close();
  }
});

test('python client: the example with a wrong token says so and how to fix it', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run(PYTHON, [join(CLIENT, 'example.py'), '--url', sidecar.url, '--token', 'not-the-token', '--rounds', '1', '--timeout', '30']);
    assert.match(r.stdout, /call failed \(401 unauthorized: .*brain token that `brainstem up` prints/);
  } finally {
    await sidecar.close();
  }
});
