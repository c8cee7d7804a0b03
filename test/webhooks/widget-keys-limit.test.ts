import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

test('live widget keys: at most liveWidgetKeys per widget, its first key included (403 plan_limit naming the limit); a revoked key frees a place', async () => {
  assert.equal(DEFAULT_LIMITS.liveWidgetKeys, 20);
  const s = await startTestServer({ limits: { liveWidgetKeys: 3 } });
  try {
    const { token } = await tenantSession(s, 'agency');
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'site chat' } })).body as { id: string; key_id: string };
    for (let i = 0; i < 2; i++) assert.equal((await s.call('POST', `/v1/widgets/${widget.id}/keys`, { token })).status, 201);
    const over = await s.call('POST', `/v1/widgets/${widget.id}/keys`, { token });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /at most 3 live keys/);
    assert.equal((await s.call('DELETE', `/v1/widgets/${widget.id}/keys/${widget.key_id}`, { token })).status, 204);
    assert.equal((await s.call('POST', `/v1/widgets/${widget.id}/keys`, { token })).status, 201);
  } finally {
    await s.stop();
  }
});
