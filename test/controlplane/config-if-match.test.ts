/**
 * A publish or rollback sent with `If-Match` (the ETag the client read, RFC 9110) ignored it: a
 * client that relied on it published over a newer version (its body's base was not stale, its
 * header was). The precondition holds now: a head the header does not name is a 409
 * version_conflict, as a stale publish is, and nothing changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

test('If-Match on PUT config and on rollback: the current ETag (or *) publishes, any other is 409 version_conflict and changes nothing', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const server = await s.call('POST', '/v1/servers', { token, body: { name: 'alpha' } });
    const path = `/v1/servers/${server.body.id}/config`;
    const read = await s.call('GET', path, { token });
    assert.equal(read.headers.get('etag'), '"v1"');
    const put = (etag: string, body = read.body) => s.call('PUT', path, { token, body, headers: { 'if-match': etag } });

    const ok = await put('"v1"');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.headers.get('etag'), '"v2"');
    const head = ok.body;
    for (const stale of ['"v1"', 'W/"v2"', '"v3"', 'v2', '"x", "v1"']) {
      const r = await put(stale, head);
      assert.equal(r.status, 409, stale);
      assert.equal(r.body.error.code, 'version_conflict');
      assert.match(r.body.error.message, /version 2/);
    }
    assert.equal((await s.call('GET', path, { token })).body.version, 2, 'nothing published');
    assert.equal((await put('"v0", "v2"', head)).status, 200, 'a list naming the head');
    assert.equal((await put('*', { ...head, version: 3 })).status, 200, '* matches any head');

    const rollback = (etag: string) => s.call('POST', `${path}/rollback`, { token, body: { version: 1 }, headers: { 'if-match': etag } });
    const refused = await rollback('"v2"');
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'version_conflict']);
    assert.equal((await s.call('GET', path, { token })).body.version, 4);
    const back = await rollback('"v4"');
    assert.equal(back.status, 200);
    assert.equal(back.body.version, 5);
  } finally {
    await s.stop();
  }
});
