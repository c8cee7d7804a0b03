import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { deliveryProblem } from './schema-check.js';
import { webhookServer } from './setup.js';
import { eventCatalogue } from '../../src/webhooks/catalogue.js';
import { EVENT_TYPES } from '../../src/webhooks/types.js';

test('GET /v1/webhooks/event-types: a JSON Schema per event body (the four of the spec and endpoint.disabled), public, the one the test receivers check', async () => {
  const { s } = await webhookServer();
  try {
    const r = await s.call('GET', '/v1/webhooks/event-types');
    assert.equal(r.status, 200, 'no credential needed');
    assert.deepEqual(
      r.body.data.map((e: any) => e.type),
      [...EVENT_TYPES, 'endpoint.disabled'],
    );
    assert.deepEqual(r.body.data, JSON.parse(JSON.stringify(eventCatalogue())), 'the receivers validate against what the route serves');
    const ajv = new Ajv2020({ strict: true });
    ajv.addFormat('date-time', true);
    for (const e of r.body.data) {
      assert.equal(e.schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.equal(typeof ajv.compile(e.schema), 'function', `${e.type} compiles under Ajv (strict)`);
      assert.equal(e.operational, e.type === 'endpoint.disabled');
    }
  } finally {
    await s.stop();
  }
});

test('the catalogue schemas accept what the API accepts and refuse what it refuses', () => {
  const body = (event: string, data: unknown) => JSON.stringify({ event, widget_id: 'wid_abc', data });
  assert.equal(deliveryProblem(body('lead.captured', { conversation_id: 'ses_1', visitor_id: 'vis_1', has_email: true, has_phone: false })), null);
  assert.match(
    deliveryProblem(body('lead.captured', { conversation_id: 'ses_1', visitor_id: 'vis_1', has_email: true, has_phone: false, email: 'x' }))!,
    /additional/,
  );
  assert.match(deliveryProblem(body('lead.captured', { conversation_id: 'ses_1', has_email: true, has_phone: false }))!, /visitor_id/);
  assert.equal(
    deliveryProblem(body('conversation.ended', { conversation_id: 'ses_1', ended_reason: 'inactivity', extra: 1 })),
    null,
    'other types forward extra fields',
  );
  assert.match(deliveryProblem(body('conversation.ended', { conversation_id: 'ses_1', ended_reason: 'bored' }))!, /allowed values/);
  assert.match(deliveryProblem(body('conversation.started', { conversation_id: 'nope' }))!, /pattern/);
  assert.match(deliveryProblem(body('ping', {}))!, /not in the catalogue/);
  assert.equal(
    deliveryProblem(
      body('endpoint.disabled', {
        endpoint_id: 'ep_1',
        url: 'https://x.example/h',
        reason: 'gone',
        disabled_at: '2026-11-28T10:00:00.000Z',
        failing_since: null,
        last_status_code: 410,
        last_error: 'HTTP 410',
      }),
    ),
    null,
  );
});
