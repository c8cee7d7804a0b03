/**
 * Conformance with spec 002 (chat-widget webhooks), section by section in the spec's own
 * order. Each case quotes the line it checks; details are tested in test/webhooks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { startReceiver } from '../webhooks/receiver.js';
import { LEAD, webhookServer } from '../webhooks/setup.js';

const PUBLIC_URL = 'https://93.184.215.14/hooks/brainstem';

// §1 "For each widget, the owner registers one or more HTTPS endpoints"; "Until an endpoint is added the list of endpoints for the widget is empty."
test("§1 a new widget's endpoint list is empty; one or more endpoints can be registered", async () => {
  const { s, token, widgetId, addEndpoint } = await webhookServer();
  try {
    assert.deepEqual((await s.call('GET', `/v1/widgets/${widgetId}/webhooks`, { token })).body, []);
    await addEndpoint({ url: 'http://127.0.0.1:9/a', events: ['lead.captured'] });
    await addEndpoint({ url: 'http://127.0.0.1:9/b', events: ['conversation.ended'] });
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/webhooks`, { token })).body.length, 2);
  } finally {
    await s.stop();
  }
});

// §2 "URL | Must be a public HTTPS endpoint that accepts POST requests; at most 512 characters."
// §5.3 "The endpoint URL must be HTTPS and publicly reachable."
test('§2/§5.3 URL: public HTTPS only (plain http and private addresses are 422), at most 512 characters', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const w = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    const create = (url: string) => s.call('POST', `/v1/widgets/${w.body.id}/webhooks`, { token, body: { url, events: ['lead.captured'] } });
    assert.equal((await create(PUBLIC_URL)).status, 201);
    for (const url of ['http://93.184.215.14/x', 'https://127.0.0.1/x', 'https://10.0.0.8/x', 'https://169.254.169.254/x']) {
      const r = await create(url);
      assert.equal(r.status, 422, url);
      assert.equal(r.body.error.details[0].path, 'url');
    }
    assert.equal((await create(PUBLIC_URL + '/' + 'a'.repeat(512 - PUBLIC_URL.length - 1))).status, 201);
    assert.equal((await create(PUBLIC_URL + '/' + 'a'.repeat(512 - PUBLIC_URL.length))).status, 422);
  } finally {
    await s.stop();
  }
});

// §2 "Signing secret | string | Used to sign deliveries; at most 4096 characters." (§8: "Signing secret length | 4096 characters")
test('§2/§8 signing secret: any string up to 4096 characters (whsec_ alone, unpadded base64, any text); 4097 is 422', async () => {
  const { s, token, widgetId } = await webhookServer();
  try {
    const create = (secret: string) =>
      s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: 'http://127.0.0.1:9/x', secret, events: ['lead.captured'] } });
    for (const secret of ['whsec_', 'whsec_AAAA', 'whsec_AAE', 'whsec_a-b_', 'x', 'é'.repeat(4096)])
      assert.equal((await create(secret)).status, 201, secret.slice(0, 12));
    assert.equal((await create('é'.repeat(4097))).status, 422);
    assert.equal((await create('bad\ud800')).status, 422);
  } finally {
    await s.stop();
  }
});

// §2 "Events to subscribe | set of event types | Chosen from the four types in section 6." §6 "Allowed event types are exactly these four."
test('§2/§6 events: a non-empty set of the four types; anything else is 422', async () => {
  const { s, token, widgetId } = await webhookServer();
  try {
    const create = (events: unknown) => s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: 'http://127.0.0.1:9/x', events } });
    assert.equal((await create(['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'])).status, 201);
    for (const events of [[], ['lead.created'], 'lead.captured']) assert.equal((await create(events)).status, 422, JSON.stringify(events));
    const event = await s.call('POST', `/v1/widgets/${widgetId}/events`, { token, body: { event: 'visitor.joined', data: { conversation_id: 'ses_1' } } });
    assert.equal(event.status, 422);
  } finally {
    await s.stop();
  }
});

// §2 Delivery body: event, widget_id, data; lead.captured data: conversation_id ses_<id>, visitor_id vis_<id>, has_email, has_phone ("the address itself is not sent").
// §4 "Method POST; Content type application/json; Body ... sent as raw bytes that the signature covers; Header X-Service-Signature: v1=<signature>"
// §5.1 "prefix v1= followed by the HMAC-SHA256 of the raw request body computed with the endpoint's signing secret"
test('§2/§4/§5 a delivery: POST application/json {event, widget_id, data}, X-Service-Signature v1= HMAC-SHA256 of the raw body', async () => {
  const rx = await startReceiver();
  const { s, widgetId, addEndpoint, post } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['lead.captured'], secret: 'receiver copy of the secret' });
    assert.equal((await post('lead.captured', LEAD)).status, 202);
    await rx.waitFor(1);
    const got = rx.received[0]!;
    assert.match(String(got.headers['content-type']), /^application\/json/);
    const body = JSON.parse(got.body);
    assert.deepEqual(Object.keys(body).sort(), ['data', 'event', 'widget_id']);
    assert.deepEqual(body, { event: 'lead.captured', widget_id: widgetId, data: LEAD });
    // §5.2 "The receiver recomputes the HMAC over the raw body with its own copy of the secret"
    assert.equal(got.headers['x-service-signature'], `v1=${createHmac('sha256', ep.secret).update(got.body).digest('hex')}`);
    // Beside it, as the design adds: the event type, a unique delivery id and the time of sending.
    assert.equal(got.headers['x-service-event'], 'lead.captured');
    assert.ok(String(got.headers['x-service-delivery']).length > 0);
    assert.match(String(got.headers['x-service-timestamp']), /^\d+$/);
  } finally {
    await s.stop();
    await rx.close();
  }
});

// §2 "data.has_email ... (the address itself is not sent)"; "data.has_phone ... (the number itself is not sent)"; the field types and formats
test("§2 lead.captured data is exactly the spec's: an e-mail address, a phone number, a wrong type or id format is 422", async () => {
  const { s, addEndpoint, post } = await webhookServer();
  try {
    await addEndpoint({ url: 'http://127.0.0.1:9/x', events: ['lead.captured'] });
    for (const data of [
      { ...LEAD, email: 'a@b.example' },
      { ...LEAD, visitor_id: 'vis_x', note: '+44 20 7946 0958' },
      { ...LEAD, conversation_id: 'conv_1' },
      // "data.has_email | boolean", "data.has_phone | boolean"; "data.visitor_id | string | Format vis_<id>"
      { ...LEAD, has_email: 'yes' },
      { ...LEAD, has_phone: 1 },
      { conversation_id: LEAD.conversation_id, visitor_id: LEAD.visitor_id, has_email: true },
      { ...LEAD, visitor_id: 'visitor_42' },
    ]) {
      const r = await post('lead.captured', data);
      assert.equal(r.status, 422, JSON.stringify(data));
    }
  } finally {
    await s.stop();
  }
});

// §6 "conversation.started | A new visitor conversation opened; fired once when the session begins."
test('§6 conversation.started is fired once per session: a repeat is 202 duplicate and delivers nothing', async () => {
  const { s, addEndpoint, post } = await webhookServer();
  try {
    await addEndpoint({ url: 'http://127.0.0.1:9/x', events: ['conversation.started'] });
    assert.equal((await post('conversation.started', { conversation_id: 'ses_once' })).body.deliveries, 1);
    const again = await post('conversation.started', { conversation_id: 'ses_once' });
    assert.equal(again.status, 202);
    assert.equal(again.body.deliveries, 0);
    assert.equal(again.body.duplicate, true);
  } finally {
    await s.stop();
  }
});

// §6 "Each delivery carries the event type in the event field."
test('§6 each delivery carries its type in event', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post } = await webhookServer();
  try {
    await addEndpoint({ url: rx.url, events: ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'] });
    await post('conversation.started', { conversation_id: 'ses_9' });
    await post('conversation.ended', { conversation_id: 'ses_9' });
    await post('escalation.triggered', { conversation_id: 'ses_9' });
    await post('lead.captured', LEAD);
    await rx.waitFor(4);
    assert.deepEqual(rx.received.map((r) => JSON.parse(r.body).event).sort(), [
      'conversation.ended',
      'conversation.started',
      'escalation.triggered',
      'lead.captured',
    ]);
  } finally {
    await s.stop();
    await rx.close();
  }
});

// §9 "The signature value carries the scheme prefix v1=."
test('§9 the signature value is v1= followed by lowercase hex', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post } = await webhookServer();
  try {
    await addEndpoint({ url: rx.url, events: ['lead.captured'] });
    await post('lead.captured', LEAD);
    await rx.waitFor(1);
    assert.match(String(rx.received[0]!.headers['x-service-signature']), /^v1=[0-9a-f]{64}$/);
  } finally {
    await s.stop();
    await rx.close();
  }
});
