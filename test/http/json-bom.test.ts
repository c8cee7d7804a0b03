import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

const BOM = '\uFEFF';

// The issue: a JSON body sent with a UTF-8 byte-order mark (PowerShell's Invoke-RestMethod with
// -InFile of a file it wrote, .NET's default UTF-8 encoder) was 400 "not valid JSON" on every
// route of the embedded server, while the sidecar's tick routes already skipped the mark.
test('a JSON body that starts with a UTF-8 byte-order mark is read like one without it, on every JSON route', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const created = await s.call('POST', '/v1/servers', { token, body: BOM + JSON.stringify({ name: 'eu-1' }) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const current = await s.call('GET', `/v1/servers/${created.body.id}/config`, { token });
    const published = await s.call('PUT', `/v1/servers/${created.body.id}/config`, { token, body: BOM + JSON.stringify(current.body) });
    assert.deepEqual([published.status, published.body.version], [200, current.body.version + 1]);
    const property = await s.call('POST', '/v1/properties', { token, body: BOM + JSON.stringify({ address: '1 Main St' }) });
    assert.equal(property.status, 201, JSON.stringify(property.body));
    // Only a leading mark is skipped; a body of the mark alone is empty, and a mark inside is malformed JSON.
    const empty = await s.call('POST', '/v1/servers', { token, body: BOM });
    assert.deepEqual([empty.status, empty.body.error.code], [400, 'bad_request']);
    assert.match(empty.body.error.message, /empty/);
    const inside = await s.call('POST', '/v1/servers', { token, body: `{${BOM}"name":"x"}` });
    assert.deepEqual([inside.status, inside.body.error.code], [400, 'bad_request']);
  } finally {
    await s.stop();
  }
});
