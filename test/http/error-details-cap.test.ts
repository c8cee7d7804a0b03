/**
 * Regression: a 422 listed every problem of the body, so 800 KB of bad items (`events` of
 * 100,000 unknown names) was answered with 14 MB of `details`. An error lists at most
 * MAX_ERROR_DETAILS problems and says how many there were; nothing is created.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError, MAX_ERROR_DETAILS, validationFailed } from '../../src/http/errors.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

test('an error keeps the first MAX_ERROR_DETAILS details and says how many there were; fewer are kept as they are', () => {
  const many = Array.from({ length: 1000 }, (_, i) => ({ path: `a[${i}]`, message: 'bad' }));
  const err = validationFailed(many);
  assert.equal(err.details?.length, MAX_ERROR_DETAILS);
  assert.equal(err.details?.[0]?.path, 'a[0]');
  assert.equal(err.message, `The request failed validation. (the first ${MAX_ERROR_DETAILS} of 1000 problems are listed)`);
  const few = new HttpError('validation_failed', 'x', { details: many.slice(0, MAX_ERROR_DETAILS) });
  assert.equal(few.message, 'x');
  assert.equal(few.details?.length, MAX_ERROR_DETAILS);
  // Rebuilt from itself (as a refusal given CORS headers is), it stays the same.
  const again = new HttpError(err.code, err.message, { details: err.details! });
  assert.equal(again.message, err.message);
});

test('100,000 bad items in a body are a 422 of a few KB, not megabytes, and create nothing', async () => {
  const s = await startTestServer({ allowPrivateWebhooks: true });
  try {
    const { token } = await tenantSession(s);
    const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    const res = await fetch(`${s.url}/v1/widgets/${widget.body.id}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/hook', events: Array.from({ length: 100_000 }, () => 'nope') }),
    });
    const text = await res.text();
    assert.equal(res.status, 422);
    assert.ok(text.length < 20_000, `${text.length} bytes`);
    const body = JSON.parse(text) as { error: { message: string; details: unknown[] } };
    assert.equal(body.error.details.length, MAX_ERROR_DETAILS);
    assert.match(body.error.message, /of 100000 problems/);
    assert.deepEqual((await s.call('GET', `/v1/widgets/${widget.body.id}/webhooks`, { token })).body, []);
  } finally {
    await s.stop();
  }
});
