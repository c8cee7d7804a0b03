import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { runCli as brainstem } from '../../helpers/paths.js';
import { startReceiver } from '../../webhooks/receiver.js';

test('webhooks trigger sends a sample event that reaches a subscribed endpoint as a real signed delivery', async () => {
  const rx = await startReceiver();
  const s = await startTestServer({ allowPrivateWebhooks: true });
  try {
    const { token } = await tenantSession(s, 'pro');
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'site' } })).body;
    assert.equal(
      (await s.call('POST', `/v1/widgets/${widget.id}/webhooks`, { token, body: { url: rx.url, events: ['lead.captured', 'conversation.started'] } })).status,
      201,
    );
    const key = (await s.call('POST', `/v1/widgets/${widget.id}/keys`, { token })).body.key as string;
    const env = { BRAINSTEM_URL: s.url, BRAINSTEM_TOKEN: key };

    const sent = await brainstem(['webhooks', 'trigger', 'lead.captured', '--widget', widget.id, '--json'], env);
    assert.equal(sent.code, 0, sent.stderr);
    const out = JSON.parse(sent.stdout) as { deliveries: number; data: Record<string, unknown> };
    assert.equal(out.deliveries, 1);
    await rx.waitFor(1);
    const delivered = JSON.parse(rx.received[0]!.body.toString()) as { event: string; widget_id: string; data: Record<string, unknown> };
    assert.equal(delivered.event, 'lead.captured');
    assert.equal(delivered.widget_id, widget.id);
    assert.deepEqual(delivered.data, out.data);
    assert.ok(rx.received[0]!.headers['x-service-signature']);

    // Each trigger is a fresh conversation, so conversation.started is never taken for a repeat.
    for (let i = 0; i < 2; i++) {
      const again = await brainstem(['webhooks', 'trigger', 'conversation.started', '--widget', widget.id], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /1 delivery queued/);
    }
    await rx.waitFor(3);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('webhooks trigger fails in one line: unknown event, no token, data the API refuses', async () => {
  const s = await startTestServer({ allowPrivateWebhooks: true });
  try {
    const { token } = await tenantSession(s, 'pro');
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'site' } })).body;
    const key = (await s.call('POST', `/v1/widgets/${widget.id}/keys`, { token })).body.key as string;
    const unknown = await brainstem(['webhooks', 'trigger', 'lead.lost', '--widget', widget.id], { BRAINSTEM_URL: s.url, BRAINSTEM_TOKEN: key });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /EVENT must be one of/);
    const noToken = await brainstem(['webhooks', 'trigger', 'lead.captured', '--widget', widget.id], { BRAINSTEM_URL: s.url, BRAINSTEM_TOKEN: '' });
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /BRAINSTEM_TOKEN/);
    const pii = await brainstem(
      [
        'webhooks',
        'trigger',
        'lead.captured',
        '--widget',
        widget.id,
        '--data',
        '{"conversation_id":"ses_1","visitor_id":"vis_1","has_email":true,"has_phone":false,"email":"a@b.example"}',
      ],
      {
        BRAINSTEM_URL: s.url,
        BRAINSTEM_TOKEN: key,
      },
    );
    assert.equal(pii.code, 1);
    assert.equal(pii.stderr.trim().split('\n').length, 1, pii.stderr);
    assert.match(pii.stderr, /refused/);
  } finally {
    await s.stop();
  }
});
