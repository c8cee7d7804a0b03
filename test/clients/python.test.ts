import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { serverWithKey } from '../controlplane/helpers.js';
import {
  clientsDir, driversDir, jsonOf, missingTool, repliesFixture, repliesOneByOne, run,
  REPLIES_FIXTURE, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN, vectors, VECTORS_FIXTURE,
} from './helpers.js';

const skip = missingTool('python3', '--version', 'python3');
if (skip) console.log(`# Python client tests skipped: ${skip}`);
const CLIENT = join(clientsDir, 'python');
const driver = (...args: string[]) => run('python3', [join(driversDir, 'python_driver.py'), CLIENT, ...args]);

test('python client: builds the fixture batch (escaped strings, optional parts left out)', { skip: skip ?? false }, async () => {
  const r = await driver('build', TICKS_FIXTURE);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ticksFixture().ticks);
});

test('python client: parses the fixture reply into the expected intents', { skip: skip ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('parse', REPLIES_FIXTURE)), repliesFixture().expected);
});

test('python client: signs every test vector like the control plane', { skip: skip ?? false }, async () => {
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

test('python client: a batch against a real sidecar, each token form, answers as the ticks one by one', { skip: skip ?? false }, async () => {
  const ticks = ticksFixture().ticks;
  const expected = await repliesOneByOne(ticks);
  for (const form of ['bearer', 'header', 'query']) {
    const sidecar = await startTokenSidecar();
    try {
      const out = jsonOf(await driver('live', sidecar.url, TOKEN, form, TICKS_FIXTURE));
      assert.equal(out.health, true);
      assert.deepEqual(out.replies, expected, form);
      assert.equal(out.single.agent, (ticks[0]!.snapshot as { agent: number }).agent);
    } finally {
      await sidecar.close();
    }
  }
});

test('python client: a wrong token raises 401 unauthorized', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    for (const form of ['bearer', 'header', 'query']) {
      assert.deepEqual(jsonOf(await driver('refused', sidecar.url, 'not-the-token', form, TICKS_FIXTURE)), { raised: true, status: 401, code: 'unauthorized' }, form);
    }
  } finally {
    await sidecar.close();
  }
});

test('python client: a signed config pull from a real control plane, then 304 with its ETag', { skip: skip ?? false }, async () => {
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

test('python client: long lists go in chunks of at most 1,024 ticks and 4 MiB, answered in order', { skip: skip ?? false }, async () => {
  const chunks = jsonOf(await driver('chunks', TICKS_FIXTURE, '2100'));
  assert.deepEqual(chunks.small, [1024, 1024, 52]);
  assert.ok(chunks.big.length > 3 && chunks.big.reduce((a: number, b: number) => a + b, 0) === 2100, JSON.stringify(chunks.big));
  assert.ok(chunks.bigBytes <= 4 * 1024 * 1024);
  const sidecar = await startTokenSidecar();
  try {
    const out = jsonOf(await driver('many', sidecar.url, TOKEN, TICKS_FIXTURE, '1100'));
    assert.equal(out.replies, 1100);
    assert.deepEqual(out.agents, Array.from({ length: 1100 }, (_, i) => i));
  } finally {
    await sidecar.close();
  }
});

test('python client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
  assert.ok(readme.includes(vectors()[0]!.signature));
  assert.ok(readme.includes(`now=${vectors()[0]!.timestamp}`));
});
