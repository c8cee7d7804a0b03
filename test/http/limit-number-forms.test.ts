/**
 * Regression: `?limit=` was read with Number(), so `1e1`, `0x10`, `+5`, ` 5` and `5.0` were
 * taken as integers on every paginated list and the activity feed, where the documented rule is
 * an integer from 1 to the route's maximum. Only decimal digits are a limit now.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPaginatedLists } from './paginated-lists.js';

test('?limit= takes decimal digits only: other number forms are 400 on the lists and the activity feed', async () => {
  const { s, lists } = await withPaginatedLists();
  try {
    for (const [credential, path] of lists) {
      for (const raw of ['1e1', '0x10', '+5', '%205', '5.0', '-0']) {
        const r = await s.call('GET', `${path}?limit=${raw}`, { token: credential });
        assert.equal(r.status, 400, `${path} ${raw}`);
        assert.equal(r.body.error.code, 'bad_request');
      }
      for (const raw of ['05', '1', '100']) assert.equal((await s.call('GET', `${path}?limit=${raw}`, { token: credential })).status, 200, `${path} ${raw}`);
    }
  } finally {
    await s.stop();
  }
});
