import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_BACKOFF_MS, ModelBackoff, QUEUE_FULL_BACKOFF_MS } from '../../src/dialogue/backoff.js';
import { PluginRequestError } from '../../src/dialogue/supervisor.js';

test('the model back-off: the plugin hint, a short pause for a full queue, the default otherwise, never below the floor; a bad request pauses nothing', () => {
  let now = 1000;
  const backoff = new ModelBackoff(() => now, 5000);
  assert.ok(backoff.available());
  assert.deepEqual(backoff.failed(new PluginRequestError('bad_request', 'no')), { kind: 'refused', code: 'bad_request' });
  assert.ok(backoff.available());

  assert.deepEqual(backoff.failed(new PluginRequestError('queue_full', 'busy')), { kind: 'backing_off', code: 'queue_full', waitMs: QUEUE_FULL_BACKOFF_MS });
  assert.equal(backoff.retryInMs(), QUEUE_FULL_BACKOFF_MS);
  now += QUEUE_FULL_BACKOFF_MS;
  assert.ok(backoff.available());

  backoff.failed(new PluginRequestError('unavailable', 'down', 2500));
  assert.equal(backoff.retryInMs(), 2500);
  now += 2500;
  backoff.failed(new Error('socket hang up'));
  assert.equal(backoff.retryInMs(), 5000, 'no hint: the default pause');
  now += 5000;
  backoff.failed(new PluginRequestError('unavailable', 'soon', 1));
  assert.equal(backoff.retryInMs(), MIN_BACKOFF_MS);
  // A shorter hint never cuts a longer pause already running.
  backoff.failed(new PluginRequestError('unavailable', 'later', 40_000));
  backoff.failed(new PluginRequestError('unavailable', 'sooner', 200));
  assert.equal(backoff.retryInMs(), 40_000);
});
