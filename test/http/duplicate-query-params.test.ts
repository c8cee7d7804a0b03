/**
 * The audit: `?limit=1&limit=500` silently took the first value. A parameter given twice is a
 * 400 naming it, on every route that reads its query through Request.searchParams(). Also on a
 * real server: an id with leading zeros is a 404, and a 404 quotes at most 64 characters of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverWithKey, signed } from '../controlplane/helpers.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { withPaginatedLists } from './paginated-lists.js';

test('a query parameter given twice is a 400 naming it; leading-zero and over-long ids are 404s quoting 64 characters', async () => {
  const { s, key, lists } = await withPaginatedLists();
  try {
    for (const [credential, path] of lists) {
      const r = await s.call('GET', `${path}?limit=1&limit=500`, { token: credential });
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error.code, 'bad_request');
      assert.match(r.body.error.message, /"limit" is given more than once/);
      assert.equal((await s.call('GET', `${path}?limit=1`, { token: credential })).status, 200, path);
    }
    const created = await s.call('POST', '/v1/properties', { token: key, body: { address: '1 Main St' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = String(created.body.id);
    assert.equal((await s.call('GET', `/v1/properties/${id}`, { token: key })).status, 200);
    const zeros = await s.call('GET', `/v1/properties/00${id}`, { token: key });
    assert.equal(zeros.status, 404);
    assert.equal(zeros.body.error.code, 'not_found');
    const long = await s.call('GET', `/v1/properties/${'9'.repeat(5000)}`, { token: key });
    assert.equal(long.status, 404);
    assert.equal(long.body.error.message, `No property with id "${'9'.repeat(64)}…".`);
  } finally {
    await s.stop();
  }
});

// The sidecar's pull reads `server` with its own scan: a second one is refused there too, even
// when both name the key's own server (the cached fast path hands it to the route).
test('a signed config pull with the server parameter twice is a 400 naming it', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const sidecar = await serverWithKey(s, token, 'a');
    const other = await serverWithKey(s, token, 'b');
    for (const [i, query] of [
      `server=${sidecar.serverId}&server=${sidecar.serverId}`,
      `server=${sidecar.serverId}&server=${other.serverId}`,
      `server=${sidecar.serverId}&server`,
    ].entries()) {
      assert.equal((await signed(s, sidecar.key, 'GET', `/v1/config?server=${sidecar.serverId}&n=${i}`)).status, 200);
      const twice = await signed(s, sidecar.key, 'GET', `/v1/config?${query}`);
      assert.equal(twice.status, 400, query);
      assert.equal(twice.body.error.code, 'bad_request');
      assert.match(twice.body.error.message, /"server" is given more than once/);
    }
    const versions = `/v1/servers/${sidecar.serverId}/config/versions`;
    assert.equal((await s.call('GET', `${versions}/1`, { token })).status, 200);
    const zeroVersion = await s.call('GET', `${versions}/01`, { token });
    assert.equal(zeroVersion.status, 404);
    assert.equal(zeroVersion.body.error.code, 'not_found');
  } finally {
    await s.stop();
  }
});
