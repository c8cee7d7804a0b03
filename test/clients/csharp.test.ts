import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';
import { serverWithKey } from '../controlplane/helpers.js';
import {
  clientsDir, driversDir, jsonOf, missingTool, repliesFixture, repliesOneByOne, run,
  REPLIES_FIXTURE, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN, vectors, VECTORS_FIXTURE,
} from './helpers.js';

const PACKAGES = 'mono-mcs libmono-system-net-http4.0-cil';
const build = tempDir('brainstem-csharp-');
after(() => build.dispose());
const EXE = join(build.path, 'driver.exe');
const EXAMPLE = join(build.path, 'example.exe');

/**
 * Compiles the client with the driver as C# 6 (what Unity, .NET Standard 2.1 and Mono's mcs
 * all take) with warnings as errors. Null when it built, else why the tests skip.
 */
async function compile(): Promise<string | null> {
  const missing = missingTool('mcs', '--version', PACKAGES) ?? missingTool('mono', '--version', PACKAGES);
  if (missing) return missing;
  const r = await run('mcs', ['-langversion:6', '-warnaserror', '-r:System.Net.Http', `-out:${EXE}`, join(clientsDir, 'csharp', 'Brainstem.cs'), join(driversDir, 'CsharpDriver.cs')]);
  if (r.status !== 0 && /CS0006.*System\.Net\.Http/.test(r.stdout + r.stderr)) {
    return `Mono's System.Net.Http is missing (apt-get install libmono-system-net-http4.0-cil; CI installs it via .ci/run)`;
  }
  assert.equal(r.status, 0, `the C# client does not compile with mcs:\n${r.stdout}${r.stderr}`);
  const example = await run('mcs', ['-langversion:6', '-warnaserror', '-r:System.Net.Http', `-out:${EXAMPLE}`, join(clientsDir, 'csharp', 'Brainstem.cs'), join(clientsDir, 'csharp', 'Example.cs')]);
  assert.equal(example.status, 0, `the C# example does not compile with mcs:\n${example.stdout}${example.stderr}`);
  return null;
}

const skip = await compile();
if (skip) console.log(`# C# client tests skipped: ${skip}`);
const driver = (...args: string[]) => run('mono', [EXE, ...args]);

test('c# client: builds the fixture batch (escaped strings, optional parts left out)', { skip: skip ?? false }, async () => {
  const r = await driver('build', TICKS_FIXTURE);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ticksFixture().ticks);
});

test('c# client: parses the fixture reply into the expected intents', { skip: skip ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('parse', REPLIES_FIXTURE)), repliesFixture().expected);
});

test('c# client: signs every test vector like the control plane', { skip: skip ?? false }, async () => {
  const got = jsonOf(await driver('sign', VECTORS_FIXTURE)) as { canonical: string; signature: string; headers: Record<string, string> }[];
  const want = vectors();
  assert.equal(got.length, want.length);
  want.forEach((v, i) => {
    assert.equal(got[i]!.canonical, v.canonical, v.name);
    assert.equal(got[i]!.signature, v.signature, v.name);
    assert.deepEqual(got[i]!.headers, {
      Authorization: `Bearer ${v.key}`,
      'X-Service-Timestamp': String(v.timestamp),
      'X-Service-Signature': v.signature,
    });
  });
});

test('c# client: a batch against a real sidecar, each token form, answers as the ticks one by one', { skip: skip ?? false }, async () => {
  const ticks = ticksFixture().ticks;
  const expected = await repliesOneByOne(ticks);
  for (const form of ['bearer', 'header', 'query']) {
    const sidecar = await startTokenSidecar();
    try {
      const out = jsonOf(await driver('live', sidecar.url, TOKEN, form, TICKS_FIXTURE));
      assert.equal(out.health, true);
      assert.deepEqual(out.replies, expected, form);
      assert.deepEqual(jsonOf(await driver('refused', sidecar.url, 'not-the-token', form, TICKS_FIXTURE)), { raised: true, status: 401, code: 'unauthorized' }, form);
    } finally {
      await sidecar.close();
    }
  }
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

test('c# client: a signed config pull from a real control plane, then 304 with its ETag', { skip: skip ?? false }, async () => {
  const s = await startTestServer();
  try {
    const session = await tenantSession(s);
    const server = await serverWithKey(s, session.token);
    const out = jsonOf(await driver('controlplane', s.url, String(server.serverId), server.key));
    assert.deepEqual(out, { version: 1, etag: '"v1"', notModified: true, etag2: '"v1"' });
  } finally {
    await s.stop();
  }
});

test('c# client: the README example runs against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('mono', [EXAMPLE, sidecar.url, TOKEN, '2']);
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

test('c# client: more than 1,024 ticks go in several calls, answered in order', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const out = jsonOf(await driver('many', sidecar.url, TOKEN, TICKS_FIXTURE, '1100'));
    assert.equal(out.replies, 1100);
    assert.deepEqual(out.agents, Array.from({ length: 1100 }, (_, i) => i));
  } finally {
    await sidecar.close();
  }
});

test('c# client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(clientsDir, 'csharp', 'README.md'), 'utf8');
  assert.ok(readme.includes(vectors()[0]!.signature));
  assert.ok(readme.includes(`FromUnixTimeSeconds(${vectors()[0]!.timestamp})`));
});
