/**
 * Regression: a list's cursor was read leniently. An opaque cursor was base64url-decoded, which
 * skips characters it does not know and padding, and its digits could carry leading zeros, so
 * `next_cursor + "!!!"`, `next_cursor + "=="` or an encoded `v1:007` all named a page; the
 * conversation list's cursor, a stream's `?after=` and the `?property_id=` filter took `007`
 * as 7. Only the exact text the API returned is a cursor now, and a number has one spelling.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { widgetServer } from '../webhooks/conversations/setup.js';

const b64 = (text: string) => Buffer.from(text).toString('base64url');

test('cursors: only the exact next_cursor names a page; tampered, padded, truncated or re-spelled cursors are 400 on every list', async () => {
  const { s, token, widgetId, visitor, start, say } = await widgetServer();
  try {
    const get = (path: string) => s.call('GET', path, { token });
    for (const title of ['One', 'Two']) {
      const r = await s.call('POST', '/v1/properties', { token, body: { title, address: '1 Road', city: 'Paris', price: 1, currency: 'EUR', bedrooms: 1 } });
      assert.equal(r.status, 201);
    }
    const endpoint = await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: 'http://127.0.0.1:9/hook', events: ['lead.captured'] } });
    assert.equal(endpoint.status, 201);
    for (let i = 0; i < 2; i++) {
      const data = { conversation_id: `ses_${i}`, visitor_id: 'vis_1', has_email: false, has_phone: false };
      assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/events`, { token, body: { event: 'lead.captured', data } })).status, 202);
    }
    await start();
    await start();

    const lists = ['/v1/properties', `/v1/widgets/${widgetId}/webhooks/${endpoint.body.id}/deliveries`, `/v1/widgets/${widgetId}/conversations`];
    for (const list of lists) {
      const first = await get(`${list}?limit=1`);
      assert.equal(first.status, 200, list);
      const cursor = first.body.next_cursor as string;
      assert.equal(typeof cursor, 'string', list);
      const next = await get(`${list}?limit=1&cursor=${encodeURIComponent(cursor)}`);
      assert.equal(next.status, 200, list);
      assert.notDeepEqual(next.body.data, first.body.data, list);

      const opaque = !/^\d+$/.test(cursor);
      const decoded = opaque ? Buffer.from(cursor, 'base64url').toString() : cursor;
      const digits = decoded.replace(/^\D*/, '');
      const prefix = decoded.slice(0, decoded.length - digits.length);
      const respell = (d: string) => (opaque ? b64(prefix + d) : d);
      const forms = [
        `${cursor}!!!`,
        `${cursor}==`,
        `${cursor}.`,
        cursor.slice(0, -1),
        respell(`0${digits}`),
        respell(`00${digits}`),
        respell('0'),
        respell(`+${digits}`),
        respell(`${digits}.0`),
        respell('9'.repeat(16)),
        opaque ? b64(`v9:${digits}`) : `0x${Number(digits).toString(16)}`,
      ];
      for (const bad of forms) {
        if (bad === cursor || bad === '') continue;
        const r = await get(`${list}?limit=1&cursor=${encodeURIComponent(bad)}`);
        assert.equal(r.status, 400, `${list} cursor ${JSON.stringify(bad)} (${JSON.stringify(cursor)})`);
        assert.equal(r.body.error.code, 'bad_request');
      }
      const max = list.endsWith('/conversations') ? 200 : 100;
      for (const limit of ['0', '-1', String(max + 1), '1.5', '9'.repeat(20), 'ten']) {
        const r = await get(`${list}?limit=${limit}`);
        assert.equal(r.status, 400, `${list} limit ${limit}`);
        assert.equal(r.body.error.code, 'bad_request');
      }
    }

    // ?property_id= names a property as its path does: no leading zero.
    const props = (await get('/v1/properties')).body.data as { id: number }[];
    const id = props[0]!.id;
    assert.equal((await get(`/v1/assets?property_id=${id}`)).status, 200);
    for (const bad of [`0${id}`, `+${id}`, '0', `${id}.0`]) assert.equal((await get(`/v1/assets?property_id=${encodeURIComponent(bad)}`)).status, 400, bad);

    // ?after= (and Last-Event-ID) of a conversation: 0 or a seq without leading zeros.
    const c = await start();
    await say(c, 'hello');
    const messages = (after: string) =>
      visitor('GET', `/v1/conversations/${c.conversation_id}/messages?after=${encodeURIComponent(after)}`, { token: c.token });
    assert.equal((await messages('0')).status, 200);
    assert.equal((await messages('1')).status, 200);
    for (const bad of ['01', '00', '+1', '1e0', ' 1', '0x1', '-0', '1.0']) assert.equal((await messages(bad)).status, 400, `after=${JSON.stringify(bad)}`);
  } finally {
    await s.stop();
  }
});
