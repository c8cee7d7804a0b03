/**
 * A list filter given empty (`?status=`, as a form with an unselected filter sends it) is the
 * filter not given, on every list: the video lists always read it so, while a webhook endpoint's
 * deliveries and a widget's conversations answered 400. A value outside the filter's set is 400 everywhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPaginatedLists } from './paginated-lists.js';

test('an empty list filter is the filter not given on every list; an unknown value is 400', async () => {
  const { s, key, token } = await withPaginatedLists();
  try {
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Shop' } })).body.id as string;
    const endpoint = (
      await s.call('POST', `/v1/widgets/${widget}/webhooks`, { token, body: { url: 'https://hooks.example.com/in', events: ['lead.captured'] } })
    ).body.id as string;
    assert.ok(endpoint, 'endpoint created');
    const lists: [string, string, string][] = [
      [key, '/v1/videos', 'status'],
      [key, '/v1/videos', 'property_id'],
      [key, '/v1/assets', 'property_id'],
      [key, '/v1/assets', 'video_id'],
      [token, `/v1/widgets/${widget}/webhooks/${endpoint}/deliveries`, 'status'],
      [token, `/v1/widgets/${widget}/conversations`, 'status'],
    ];
    for (const [credential, path, filter] of lists) {
      const plain = await s.call('GET', path, { token: credential });
      const empty = await s.call('GET', `${path}?${filter}=`, { token: credential });
      assert.equal(empty.status, 200, `${path}?${filter}=: ${JSON.stringify(empty.body)}`);
      assert.deepEqual(empty.body, plain.body, `${path}?${filter}=`);
      const bad = await s.call('GET', `${path}?${filter}=bogus`, { token: credential });
      assert.equal(bad.status, 400, `${path}?${filter}=bogus`);
      assert.equal(bad.body.error.code, 'bad_request');
    }
  } finally {
    await s.stop();
  }
});
