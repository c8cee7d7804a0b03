import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signingVectors } from '../helpers/signing-vectors.js';
import { tempDir } from '../helpers/paths.js';
import { clientsDir, driversDir, jsonOf, missingTool, run, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN } from './helpers.js';
import { clientSuite } from './suite.js';

const PACKAGES = 'mono-mcs libmono-system-net-http4.0-cil';
const build = tempDir('brainstem-csharp-');
after(() => build.dispose());
const EXE = join(build.path, 'driver.exe');
const EXAMPLE = join(build.path, 'example.exe');
const SOURCE = join(clientsDir, 'csharp', 'Brainstem.cs');

/** mcs as C# 6 (what Unity, .NET Standard 2.1 and Mono all take), warnings as errors. */
const mcs = (out: string, ...files: string[]) => run('mcs', ['-langversion:6', '-warnaserror', '-r:System.Net.Http', `-out:${out}`, ...files]);

/** Compiles the driver and the example with the client. Null when they built, else why the tests skip. */
async function compile(): Promise<string | null> {
  const missing = missingTool('mcs', '--version', PACKAGES) ?? missingTool('mono', '--version', PACKAGES);
  if (missing) return missing;
  const r = await mcs(EXE, SOURCE, join(driversDir, 'CsharpDriver.cs'));
  if (r.status !== 0 && /CS0006.*System\.Net\.Http/.test(r.stdout + r.stderr)) {
    return `Mono's System.Net.Http is missing (apt-get install libmono-system-net-http4.0-cil; CI installs it via .ci/run)`;
  }
  assert.equal(r.status, 0, `the C# client does not compile with mcs:\n${r.stdout}${r.stderr}`);
  const example = await mcs(EXAMPLE, SOURCE, join(clientsDir, 'csharp', 'Example.cs'));
  assert.equal(example.status, 0, `the C# example does not compile with mcs:\n${example.stdout}${example.stderr}`);
  return null;
}

const skip = await compile();
if (skip) console.log(`# C# client tests skipped: ${skip}`);
const driver = (...args: string[]) => run('mono', [EXE, ...args]);

clientSuite({
  name: 'c# client',
  skip,
  driver,
  signs: true,
  splitsLongLists: true,
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

test('c# client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(clientsDir, 'csharp', 'README.md'), 'utf8');
  assert.ok(readme.includes(signingVectors()[0]!.signature));
  assert.ok(readme.includes(`FromUnixTimeSeconds(${signingVectors()[0]!.timestamp})`));
});
