import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ALLOWED_ORIGINS_MAX,
  GREETING_MAX_CHARS,
  INSTRUCTIONS_MAX_CHARS,
  LEAD_FIELD_MAX_CHARS,
  REASON_MAX_CHARS,
} from '../../../src/webhooks/conversations/types.js';
import { ANALYTICS_MAX_DAYS } from '../../../src/webhooks/conversations/store.js';
import { PAGE, widgetServer } from './setup.js';

/** Each documented size of a widget's settings and a visitor's requests: at the limit accepted, one past it refused naming the field, nothing changed. */
test('widget settings: greeting, instructions and allowed origins at their limits are kept, one past is 422 naming the field', async () => {
  const { s, token, widgetId } = await widgetServer();
  try {
    const patch = (body: unknown) => s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body });
    const origins = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? PAGE : `https://shop${i}.example`));
    for (const [body, path] of [
      [{ greeting: 'g'.repeat(GREETING_MAX_CHARS + 1) }, 'greeting'],
      [{ agent: { instructions: 'i'.repeat(INSTRUCTIONS_MAX_CHARS + 1) } }, 'agent.instructions'],
      [{ allowed_origins: origins(ALLOWED_ORIGINS_MAX + 1) }, 'allowed_origins'],
    ] as const) {
      const r = await patch(body);
      assert.equal(r.status, 422, path);
      assert.equal(r.body.error.details[0].path, path);
    }
    const before = await s.call('GET', `/v1/widgets/${widgetId}/settings`, { token });
    assert.deepEqual(before.body.allowed_origins, [PAGE], 'nothing changed');
    const ok = await patch({
      greeting: 'g'.repeat(GREETING_MAX_CHARS),
      agent: { instructions: 'i'.repeat(INSTRUCTIONS_MAX_CHARS) },
      allowed_origins: origins(ALLOWED_ORIGINS_MAX),
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.greeting.length, GREETING_MAX_CHARS);
    assert.equal(ok.body.allowed_origins.length, ALLOWED_ORIGINS_MAX);
  } finally {
    await s.stop();
  }
});

test('visitor requests: lead fields and an escalation reason at their limits are taken, one past is 422; analytics days 1 to the maximum', async () => {
  const { s, token, widgetId, start, visitor } = await widgetServer();
  try {
    const c = await start();
    const at = `/v1/conversations/${c.conversation_id}`;
    const long = await visitor('POST', `${at}/lead`, { token: c.token, body: { name: 'n'.repeat(LEAD_FIELD_MAX_CHARS + 1), email: 'a@example.com' } });
    assert.deepEqual([long.status, long.body.error.details[0].path], [422, 'name']);
    const lead = await visitor('POST', `${at}/lead`, { token: c.token, body: { name: 'n'.repeat(LEAD_FIELD_MAX_CHARS), email: 'a@example.com' } });
    assert.equal(lead.status, 201, JSON.stringify(lead.body));
    const why = await visitor('POST', `${at}/escalate`, { token: c.token, body: { reason: 'r'.repeat(REASON_MAX_CHARS + 1) } });
    assert.deepEqual([why.status, why.body.error.details[0].path], [422, 'reason']);
    const escalated = await visitor('POST', `${at}/escalate`, { token: c.token, body: { reason: 'r'.repeat(REASON_MAX_CHARS) } });
    assert.equal(escalated.status, 200, JSON.stringify(escalated.body));

    const analytics = (days: string) => s.call('GET', `/v1/widgets/${widgetId}/analytics?days=${days}`, { token });
    const most = await analytics(String(ANALYTICS_MAX_DAYS));
    assert.equal(most.status, 200);
    assert.equal(most.body.days.length, ANALYTICS_MAX_DAYS);
    for (const days of [String(ANALYTICS_MAX_DAYS + 1), '0', '-1', '1.5', 'x']) {
      const r = await analytics(days);
      assert.deepEqual([r.status, r.body.error.code], [400, 'bad_request'], days);
    }
  } finally {
    await s.stop();
  }
});
