import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateBundle } from '../../brain/bundle.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { serverWithKey } from './helpers.js';

/**
 * The bundle validator named an unknown key whole in its detail's path, and a bad
 * `speech.limits.economy` or flag value whole in its message: a publish of a 4 MiB body with one
 * long key got the key back (and measured its edit distance to each known key for a "did you
 * mean", holding the event loop for seconds). A key or value is quoted at most 64 characters,
 * then '…'; a key that long gets no suggestion, nor does any problem past the 50 an answer shows.
 */
test('a publish naming a key of a megabyte, or a bad economy of 100,000 characters, is 422 quoting each cut at 64 characters', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const bundle = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const longKey = `k${'x'.repeat(1_000_000)}`;
    const body = { ...bundle, [longKey]: 1, speech: { ...bundle.speech, limits: { ...bundle.speech.limits, economy: 'e'.repeat(100_000) } } };
    const r = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body });
    assert.equal(r.status, 422);
    const text = JSON.stringify(r.body);
    assert.ok(text.length < 2000, `an answer of ${text.length} characters`);
    const details = r.body.error.details as { path: string; message: string }[];
    assert.ok(
      details.some((d) => d.path === `k${'x'.repeat(63)}…` && d.message === 'is not a known field'),
      JSON.stringify(details),
    );
    assert.ok(
      details.some((d) => d.path === 'speech.limits.economy' && d.message.endsWith(`got "${'e'.repeat(64)}…"`)),
      JSON.stringify(details),
    );
    assert.equal((await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token })).body.length, 1, 'nothing published');
  } finally {
    await s.stop();
  }
});

test('a misspelt key still gets its suggestion; problems past the first 50 are counted without one', () => {
  const keys = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`polcy${i}`, 1]));
  const check = validateBundle({ polcy: {}, ...keys });
  assert.equal(check.ok, false);
  const problems = check.ok ? [] : check.problems;
  assert.ok(
    problems.some((p) => p.path === 'polcy' && p.message === 'is not a known field (did you mean "policy"?)'),
    JSON.stringify(problems.slice(0, 5)),
  );
  const unknown = problems.filter((p) => p.message.startsWith('is not a known field'));
  assert.equal(unknown.length, 201);
  assert.ok(unknown.slice(-100).every((p) => p.message === 'is not a known field'));
});
