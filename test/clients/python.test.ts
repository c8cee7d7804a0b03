import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signingVectors } from '../helpers/signing-vectors.js';
import { clientsDir, driversDir, jsonOf, missingTool, run, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN } from './helpers.js';
import { clientSuite } from './suite.js';

const skip = missingTool('python3', '--version', 'python3');
if (skip) console.log(`# Python client tests skipped: ${skip}`);
const CLIENT = join(clientsDir, 'python');
const driver = (...args: string[]) => run('python3', [join(driversDir, 'python_driver.py'), CLIENT, ...args]);

clientSuite({
  name: 'python client',
  skip,
  driver,
  signs: true,
  splitsLongLists: true,
  checkLive(out) {
    assert.equal(out.health, true);
    assert.equal(out.single.agent, (ticksFixture().ticks[0]!.snapshot as { agent: number }).agent);
  },
});

test('python client: long lists go in chunks of at most 1,024 ticks and 4 MiB', { skip: skip ?? false }, async () => {
  const chunks = jsonOf(await driver('chunks', TICKS_FIXTURE, '2100'));
  assert.deepEqual(chunks.small, [1024, 1024, 52]);
  assert.ok(chunks.big.length > 3 && chunks.big.reduce((a: number, b: number) => a + b, 0) === 2100, JSON.stringify(chunks.big));
  assert.ok(chunks.bigBytes <= 4 * 1024 * 1024);
});

test('python client: the README example runs against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('python3', [join(CLIENT, 'example.py'), '--url', sidecar.url, '--token', TOKEN, '--hz', '10', '--rounds', '3', '--timeout', '30']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 9, r.stdout);
    for (const line of lines) assert.match(line, /^round [0-2] agent [1-3]: (standing|crouched|prone): /);
  } finally {
    await sidecar.close();
  }
});

test('python client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
  assert.ok(readme.includes(signingVectors()[0]!.signature));
  assert.ok(readme.includes(`now=${signingVectors()[0]!.timestamp}`));
});
