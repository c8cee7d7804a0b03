import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run, startTokenSidecar, ticksFixture, TOKEN } from './helpers.js';
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

test('python client: the README example runs against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run(PYTHON, [join(CLIENT, 'example.py'), '--url', sidecar.url, '--token', TOKEN, '--hz', '10', '--rounds', '3', '--timeout', '30']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 9, r.stdout);
    for (const line of lines) assert.match(line, /^round [0-2] agent [1-3]: (standing|crouched|prone): /);
  } finally {
    await sidecar.close();
  }
});
