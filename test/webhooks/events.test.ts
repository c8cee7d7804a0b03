import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectPii, validateEvent } from '../../src/webhooks/events.js';

test('PII detector: e-mail addresses and phone numbers in any notation, not ids', () => {
  for (const s of ['jane@example.com', 'mail me: j.doe+x@sub.example.co.uk']) assert.equal(detectPii(s), 'email', s);
  for (const s of ['+1 (555) 123-4567', '555-123-4567', '+44 20 7946 0958', '0612345678', 'call 06.12.34.56.78 now']) assert.equal(detectPii(s), 'phone', s);
  for (const s of ['ses_20261125123456', 'vis_5551234567', 'wants a human', '3 messages', 'order 12345']) assert.equal(detectPii(s), null, s);
});

test('lead.captured carries exactly its four fields; anything else is refused', () => {
  const ok = validateEvent('lead.captured', { conversation_id: 'ses_1', visitor_id: 'vis_1', has_email: true, has_phone: true });
  assert.equal(ok.ok, true);
  const extra = validateEvent('lead.captured', { conversation_id: 'ses_1', visitor_id: 'vis_1', has_email: true, has_phone: true, name: 'Jane' });
  assert.equal(extra.ok, false);
  assert.deepEqual(extra.ok ? [] : extra.details.map((d) => d.path), ['data.name']);
  const email = validateEvent('lead.captured', { conversation_id: 'ses_1', visitor_id: 'vis_1', has_email: true, has_phone: false, email: 'jane@example.com' });
  assert.equal(email.ok, false);
  assert.match(email.ok ? '' : email.details[0]!.message, /e-mail/);
  const nested = validateEvent('conversation.started', { conversation_id: 'ses_1', meta: { contact: ['+1 555 123 4567'] } });
  assert.equal(nested.ok, false);
  assert.equal(nested.ok ? '' : nested.details[0]!.path, 'data.meta.contact[0]');
  const inKey = validateEvent('conversation.started', { conversation_id: 'ses_1', 'jane@example.com': true });
  assert.equal(inKey.ok, false);
  const missing = validateEvent('lead.captured', { conversation_id: 'ses_1' });
  assert.deepEqual(missing.ok ? [] : missing.details.map((d) => d.path), ['data.visitor_id', 'data.has_email', 'data.has_phone']);
  const badIds = validateEvent('lead.captured', { conversation_id: 'abc', visitor_id: 'ses_1', has_email: 'yes', has_phone: false });
  assert.deepEqual(badIds.ok ? [] : badIds.details.map((d) => d.path), ['data.conversation_id', 'data.visitor_id', 'data.has_email']);
});

test('the other three types: conversation_id required, documented fields checked, free text scanned', () => {
  assert.equal(
    validateEvent('conversation.ended', { conversation_id: 'ses_1', visitor_id: 'vis_2', ended_reason: 'inactivity', message_count: 12, duration_seconds: 340 })
      .ok,
    true,
  );
  assert.equal(validateEvent('conversation.ended', { conversation_id: 'ses_1', ended_reason: 'bored' }).ok, false);
  assert.equal(validateEvent('conversation.ended', { conversation_id: 'ses_1', message_count: -1 }).ok, false);
  assert.equal(validateEvent('escalation.triggered', { conversation_id: 'ses_1', reason: 'visitor asked for a person' }).ok, true);
  assert.equal(validateEvent('escalation.triggered', { conversation_id: 'ses_1', reason: 'call me on 555 123 4567' }).ok, false);
  assert.equal(validateEvent('conversation.started', { visitor_id: 'vis_1' }).ok, false);
  assert.equal(validateEvent('conversation.paused', { conversation_id: 'ses_1' }).ok, false);
  assert.equal(validateEvent('conversation.started', null).ok, false);
  assert.equal(validateEvent('conversation.started', []).ok, false);
});

// The issue: a conversation id made of a UUID (ses_550e8400-e29b-41d4-a716-446655440000) was
// refused as "looks like a phone number": its last group is twelve digits after a hyphen.
test('ids of the documented form are not taken for phone numbers (UUIDs, dated ids); the same digits elsewhere still are', () => {
  const ids = ['ses_550e8400-e29b-41d4-a716-446655440000', 'ses_2026-11-26-000123', 'ses_a-5551234567'];
  for (const conversation_id of ids) {
    const lead = validateEvent('lead.captured', { conversation_id, visitor_id: 'vis_123e4567-e89b-12d3-a456-426614174000', has_email: true, has_phone: false });
    assert.equal(lead.ok, true, conversation_id);
    assert.equal(validateEvent('conversation.started', { conversation_id }).ok, true, conversation_id);
  }
  // Outside the id fields, or in an id that is not of its form, the scan still applies.
  const note = validateEvent('conversation.started', { conversation_id: 'ses_1', note: 'a-5551234567' });
  assert.deepEqual(note.ok ? [] : note.details.map((d) => d.path), ['data.note']);
  const malformed = validateEvent('lead.captured', { conversation_id: 'ses 555-123-4567', visitor_id: 'vis_1', has_email: true, has_phone: false });
  assert.deepEqual(malformed.ok ? [] : malformed.details.map((d) => [d.path, /phone/.test(d.message)]), [['data.conversation_id', true]]);
});

// The audit: a POST without `data` was told "must be an object, got null", as if null were sent.
test('an absent event or data field is reported as required, a null one as the wrong type', () => {
  const absent = validateEvent(undefined, undefined);
  assert.deepEqual(absent.ok ? [] : absent.details, [
    { path: 'event', message: 'is required' },
    { path: 'data', message: 'is required' },
  ]);
  const nulls = validateEvent('conversation.started', null);
  assert.deepEqual(nulls.ok ? [] : nulls.details, [{ path: 'data', message: 'must be an object, got null' }]);
});
