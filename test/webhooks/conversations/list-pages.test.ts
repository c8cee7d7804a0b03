import { test } from 'node:test';
import assert from 'node:assert/strict';
import { widgetServer } from './setup.js';

/**
 * A widget's conversation list was paged its own way (?limit= 1-200, default 50; the cursor a
 * bare row number, so any number named a page): it takes ?limit= 1-100 (default 20) and the
 * opaque cursor of every {data, next_cursor} list now.
 */
test('the conversation list: 20 a page by default, ?limit= 1-100, the opaque next_cursor to the end, bad paging 400', async () => {
  const { s, token, widgetId, start } = await widgetServer();
  try {
    const n = 25;
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await start()).conversation_id);
    const path = `/v1/widgets/${widgetId}/conversations`;
    const first = await s.call('GET', path, { token });
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, 20);
    assert.match(first.body.next_cursor, /^[A-Za-z0-9_-]+$/);
    const rest = await s.call('GET', `${path}?cursor=${first.body.next_cursor}`, { token });
    assert.equal(rest.body.data.length, 5);
    assert.equal(rest.body.next_cursor, null);
    assert.deepEqual(
      [...first.body.data, ...rest.body.data].map((c: { id: string }) => c.id),
      [...ids].reverse(),
      'each once, newest first',
    );
    assert.equal((await s.call('GET', `${path}?limit=100`, { token })).body.data.length, n);
    for (const q of ['limit=0', 'limit=101', 'limit=200', 'limit=-1', 'limit=1.5', 'cursor=abc', 'cursor=5', `cursor=${first.body.next_cursor}!`]) {
      const r = await s.call('GET', `${path}?${q}`, { token });
      assert.deepEqual([r.status, r.body.error?.code], [400, 'bad_request'], q);
    }
  } finally {
    await s.stop();
  }
});
