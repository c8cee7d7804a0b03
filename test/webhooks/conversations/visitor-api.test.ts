import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startReceiver } from '../receiver.js';
import { testClock } from '../setup.js';
import { openStream, PAGE, widgetServer } from './setup.js';
import { startFakeOpenAI } from '../../../bench/fake-openai.js';
import { CONVERSATION_MAX_MESSAGES, KNOWLEDGE_MAX_BYTES, MESSAGE_MAX_CHARS } from '../../../src/webhooks/conversations/types.js';

const KNOWLEDGE = `Opening hours: we are open Monday to Friday, 9 to 17.

Shipping: parcels ship within two days; shipping is free above 50 euros.

Returns: you can return any item within 30 days.`;

test('a conversation from start to end: the rule agent answers from the knowledge, the lead form, a person, an operator reply, the end; exactly four signed deliveries in order, no personal data', async () => {
  const rx = await startReceiver();
  const { s, token, widgetId, patch, visitor, start, say } = await widgetServer();
  try {
    await patch({ name: 'Shop help', color: '#7a2e0e', greeting: 'Hello there!', agent: { knowledge: KNOWLEDGE } });
    const ep = await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, {
      token,
      body: { url: rx.url, events: ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'] },
    });
    const config = await visitor('GET', `/v1/widgets/${widgetId}/config`);
    assert.deepEqual(config.body, { id: widgetId, name: 'Shop help', color: '#7a2e0e', greeting: 'Hello there!' });
    assert.equal(config.headers.get('access-control-allow-origin'), PAGE);

    const c = await start();
    assert.match(c.conversation_id, /^ses_/);
    assert.match(c.visitor_id, /^vis_/);
    const events = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
    assert.equal(events.res.status, 200);
    assert.match(events.res.headers.get('content-type')!, /text\/event-stream/);

    const answer = await say(c, 'When does my parcel ship?');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('access-control-allow-origin'), PAGE);
    const kinds = answer.frames.map((f) => f.event);
    assert.equal(kinds[0], 'message');
    assert.ok(kinds.filter((k) => k === 'delta').length > 3, 'streamed in pieces');
    assert.equal(kinds.at(-1), 'done');
    const done = answer.frames.at(-1)!.data;
    assert.equal(done.handled_by, 'agent');
    assert.match(done.message.text, /ship within two days/);
    assert.equal(
      answer.frames
        .filter((f) => f.event === 'delta')
        .map((f) => f.data.text)
        .join('')
        .trim(),
      done.message.text,
    );

    const quote = await say(c, 'Can I get a quote for 100 chairs?');
    assert.ok(quote.frames.some((f) => f.event === 'lead_form'));
    await events.next((f) => f.event === 'lead_form');
    const lead = await visitor('POST', `/v1/conversations/${c.conversation_id}/lead`, {
      token: c.token,
      body: { name: 'Ann Example', email: 'ann@example.com', phone: '+44 20 7946 0958' },
    });
    assert.equal(lead.status, 201);
    assert.deepEqual(lead.body, { conversation_id: c.conversation_id, has_email: true, has_phone: true });

    const person = await say(c, 'I would like to talk to a person please');
    assert.ok(person.frames.some((f) => f.event === 'escalated'));
    // A person handles it now: the agent stays quiet.
    const waiting = await say(c, 'Hello?');
    assert.deepEqual(waiting.frames.at(-1)!.data, { handled_by: 'human', message: null });
    const reply = await s.call('POST', `/v1/widgets/${widgetId}/conversations/${c.conversation_id}/reply`, { token, body: { text: 'Hi Ann, I can help.' } });
    assert.equal(reply.status, 201);
    const live = await events.next((f) => f.event === 'message' && f.data.role === 'operator');
    assert.equal(live.data.text, 'Hi Ann, I can help.');
    assert.equal(live.id, String(reply.body.seq));

    const detail = await s.call('GET', `/v1/widgets/${widgetId}/conversations/${c.conversation_id}`, { token });
    assert.equal(detail.body.lead.email, 'ann@example.com');
    assert.equal(detail.body.lead.phone, '+44 20 7946 0958');
    assert.deepEqual(
      detail.body.messages.map((m: { role: string }) => m.role),
      ['visitor', 'agent', 'visitor', 'agent', 'visitor', 'agent', 'visitor', 'operator'],
    );

    const end = await visitor('POST', `/v1/conversations/${c.conversation_id}/end`, { token: c.token });
    assert.equal(end.status, 200);
    assert.equal((await visitor('POST', `/v1/conversations/${c.conversation_id}/end`, { token: c.token })).status, 200, 'again: 200, nothing more');
    await events.next((f) => f.event === 'ended');
    await events.done;
    assert.equal((await say(c, 'still there?')).status, 409);
    // The injection route obeys the conversation's own once-only rules.
    const injected = await s.call('POST', `/v1/widgets/${widgetId}/events`, {
      token,
      body: { event: 'conversation.ended', data: { conversation_id: c.conversation_id } },
    });
    assert.equal(injected.body.duplicate, true);

    await rx.waitFor(4);
    await s.webhooks.dispatcher.runDue();
    assert.equal(rx.received.length, 4);
    const bodies = rx.received.map((r) => JSON.parse(r.body));
    assert.deepEqual(
      bodies.map((b) => b.event),
      ['conversation.started', 'lead.captured', 'escalation.triggered', 'conversation.ended'],
    );
    for (const r of rx.received) {
      assert.equal(r.headers['x-service-signature'], `v1=${createHmac('sha256', ep.body.secret).update(r.body).digest('hex')}`);
      assert.ok(!/ann@example\.com|7946|0958/.test(r.body), r.body);
      assert.equal(JSON.parse(r.body).data.conversation_id, c.conversation_id);
    }
    assert.deepEqual(bodies[1].data, { conversation_id: c.conversation_id, visitor_id: c.visitor_id, has_email: true, has_phone: true });
    assert.equal(bodies[3].data.ended_reason, 'visitor_left');
    assert.equal(bodies[3].data.message_count, 8);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('origins: a page from an origin the widget does not list is refused on every visitor call; a preflight from a listed one is answered', async () => {
  const { s, widgetId, visitor, start } = await widgetServer();
  try {
    const evil = 'https://evil.example';
    const refused = await visitor('POST', `/v1/widgets/${widgetId}/conversations`, { origin: evil, body: {} });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'forbidden');
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    assert.equal((await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: evil })).status, 403);
    const c = await start();
    for (const [method, path, body] of [
      ['POST', 'messages', { text: 'hi' }],
      ['GET', 'events', undefined],
      ['GET', 'messages', undefined],
      ['POST', 'lead', { email: 'x@example.com' }],
      ['POST', 'escalate', {}],
      ['POST', 'end', undefined],
    ] as const) {
      const r = await visitor(method, `/v1/conversations/${c.conversation_id}/${path}`, { token: c.token, origin: evil, ...(body ? { body } : {}) });
      assert.equal(r.status, 403, `${method} ${path}`);
    }
    const pre = await fetch(`${s.url}/v1/conversations/${c.conversation_id}/messages`, {
      method: 'OPTIONS',
      headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), PAGE);
    assert.match(pre.headers.get('access-control-allow-headers')!, /Authorization/);
    const badPre = await fetch(`${s.url}/v1/widgets/${widgetId}/conversations`, { method: 'OPTIONS', headers: { origin: evil } });
    assert.equal(badPre.status, 403);
    // A wrong token is a 401, the same as an unknown conversation.
    assert.equal((await visitor('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: 'bvt_wrong', body: { text: 'hi' } })).status, 401);
    assert.equal((await visitor('POST', `/v1/conversations/ses_nope/messages`, { token: c.token, body: { text: 'hi' } })).status, 401);
  } finally {
    await s.stop();
  }
});

test('limits: a message of more than 2,000 characters, knowledge of more than 100 KB, the 201st message, bad settings; each refused with its documented error', async () => {
  const { s, widgetId, patch, visitor, start, say, token } = await widgetServer({
    limits: { widgetConversationMessages: { limit: 10_000, windowMs: 60_000 }, widgetVisitor: { limit: 10_000, windowMs: 60_000 } },
  });
  try {
    const c = await start();
    const long = await say(c, 'x'.repeat(MESSAGE_MAX_CHARS + 1));
    assert.equal(long.status, 422);
    assert.equal(long.body.error.details[0].path, 'text');
    assert.equal((await say(c, '😀'.repeat(MESSAGE_MAX_CHARS))).status, 200, 'characters, not UTF-16 units');
    const big = await s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body: { agent: { knowledge: 'k'.repeat(KNOWLEDGE_MAX_BYTES + 1) } } });
    assert.equal(big.status, 422);
    assert.equal(big.body.error.details[0].path, 'agent.knowledge');
    await patch({ agent: { knowledge: 'k'.repeat(KNOWLEDGE_MAX_BYTES) } });
    const bad = await s.call('PATCH', `/v1/widgets/${widgetId}`, {
      token,
      body: { color: 'red', allowed_origins: ['https://x.example/path'], agent: { base_url: 'http://169.254.169.254/v1', nope: 1 }, extra: true },
    });
    assert.equal(bad.status, 422);
    const paths = bad.body.error.details.map((d: { path: string }) => d.path).sort();
    assert.deepEqual(paths, ['agent.nope', 'allowed_origins[0]', 'color', 'extra']);
    // The 200th message fills the conversation (visitor messages and replies count alike).
    for (let i = 2; i <= CONVERSATION_MAX_MESSAGES / 2; i++) assert.equal((await say(c, `message ${i}`)).status, 200);
    const full = await say(c, 'one more');
    assert.equal(full.status, 403);
    assert.equal(full.body.error.code, 'plan_limit');
    assert.match(full.body.error.message, /200 messages/);
    assert.equal((await visitor('GET', `/v1/conversations/${c.conversation_id}/messages`, { token: c.token })).body.messages.length, CONVERSATION_MAX_MESSAGES);
  } finally {
    await s.stop();
  }
});

test('rate limits per conversation, per visitor and per client address answer 429 with Retry-After and the CORS headers', async () => {
  const { s, widgetId, visitor, start, say } = await widgetServer({
    limits: {
      widgetConversationMessages: { limit: 2, windowMs: 60_000 },
      widgetVisitor: { limit: 5, windowMs: 60_000 },
      widgetAddress: { limit: 12, windowMs: 60_000 },
    },
  });
  try {
    const c = await start();
    assert.equal((await say(c, 'one')).status, 200);
    assert.equal((await say(c, 'two')).status, 200);
    const third = await say(c, 'three');
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get('retry-after')) > 0);
    assert.equal(third.headers.get('access-control-allow-origin'), PAGE);
    assert.match(third.body.error.message, /per conversation/);
    // The same visitor in a new conversation: the visitor's own limit (5: three messages, the new conversation, one more).
    const again = await start(c.visitor_id);
    assert.equal((await say(again, 'four')).status, 200);
    const visitorLimited = await say(again, 'five');
    assert.equal(visitorLimited.status, 429);
    assert.match(visitorLimited.body.error.message, /per visitor/);
    let address = 0;
    for (let i = 0; i < 12 && address === 0; i++) {
      const r = await visitor('GET', `/v1/widgets/${widgetId}/config`);
      if (r.status === 429) address = i + 1;
    }
    assert.ok(address > 0, 'the address limit was reached');
  } finally {
    await s.stop();
  }
});

test('idle timeout: a conversation without a message for the configured time ends once (inactivity), its stream told', async () => {
  const rx = await startReceiver();
  const clock = testClock();
  const { s, token, widgetId, start, say } = await widgetServer({ now: clock.now, conversations: { idleMs: 60_000, sweepMs: 3_600_000 } });
  try {
    await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: rx.url, events: ['conversation.started', 'conversation.ended'] } });
    const c = await start();
    await say(c, 'hello');
    const events = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
    await events.next((f) => f.event === 'state');
    clock.advance(59_000);
    assert.equal(await s.conversations.sweep(), 0);
    clock.advance(2_000);
    assert.equal(await s.conversations.sweep(), 1);
    assert.equal(await s.conversations.sweep(), 0);
    assert.deepEqual((await events.next((f) => f.event === 'ended')).data, { reason: 'inactivity' });
    await rx.waitFor(2);
    await s.webhooks.dispatcher.runDue();
    assert.deepEqual(
      rx.received.map((r) => [JSON.parse(r.body).event, JSON.parse(r.body).data.ended_reason]),
      [
        ['conversation.started', undefined],
        ['conversation.ended', 'inactivity'],
      ],
    );
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('a model behind the openai package streams the reply and calls the tools; a failing model still answers (the rule agent)', async () => {
  const fake = await startFakeOpenAI();
  const { s, patch, start, say } = await widgetServer();
  try {
    await patch({
      agent: { base_url: fake.baseUrl, model: 'fake-model', api_key: 'sk-test', instructions: 'You are Shopbot.', knowledge: 'Returns: within 30 days.' },
    });
    fake.reply = () => 'Let me get someone for you.';
    fake.toolCalls = () => [{ name: 'escalate_to_human', arguments: JSON.stringify({ reason: 'asked about a refund' }) }];
    const c = await start();
    const r = await say(c, 'I want my money back');
    const kinds = r.frames.map((f) => f.event);
    assert.ok(kinds.includes('delta'));
    assert.deepEqual(r.frames.find((f) => f.event === 'escalated')!.data, { reason: 'asked about a refund' });
    assert.equal(r.frames.at(-1)!.data.message.text, 'Let me get someone for you.');
    const sent = fake.chats[0]!;
    assert.equal(sent.stream, true);
    assert.equal(sent.model, 'fake-model');
    assert.deepEqual(
      sent.tools.map((t: { function: { name: string } }) => t.function.name),
      ['escalate_to_human', 'show_lead_form'],
    );
    assert.match(sent.messages[0].content, /You are Shopbot\.[\s\S]*Returns: within 30 days\./);
    assert.deepEqual(sent.messages.at(-1), { role: 'user', content: 'I want my money back' });

    const c2 = await start();
    fake.toolCalls = () => [{ name: 'show_lead_form', arguments: '{"reason":"wants a call"}' }];
    fake.reply = () => 'Sure.';
    assert.ok((await say(c2, 'call me')).frames.some((f) => f.event === 'lead_form'));
    fake.failNext(500);
    const failed = await say(c2, 'what about returns?');
    assert.equal(failed.status, 200);
    assert.match(failed.frames.at(-1)!.data.message.text, /Returns: within 30 days/);
  } finally {
    await s.stop();
    await fake.close();
  }
});

test("a suspended tenant's widget answers visitors with a polite 503; the owner's settings round-trip without showing the model key", async () => {
  const { s, token, widgetId, patch, visitor, start, suspend } = await widgetServer();
  try {
    const saved = await patch({ agent: { model: 'm', api_key: 'sk-secret' } });
    assert.equal(saved.agent.api_key_set, true);
    assert.ok(!JSON.stringify(saved).includes('sk-secret'));
    const got = await s.call('GET', `/v1/widgets/${widgetId}/settings`, { token });
    assert.ok(!JSON.stringify(got.body).includes('sk-secret'));
    const c = await start();
    await suspend();
    const r = await visitor('POST', `/v1/widgets/${widgetId}/conversations`, { body: {} });
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, 'unavailable');
    assert.match(r.body.error.message, /unavailable right now/);
    assert.equal((await visitor('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: c.token, body: { text: 'hi' } })).status, 503);
  } finally {
    await s.stop();
  }
});

test('retention: ended conversations older than the retention are pruned with their transcript and lead; an owner deletes one at once', async () => {
  const clock = testClock();
  const { s, token, widgetId, start, say, visitor } = await widgetServer({ now: clock.now, conversations: { retentionDays: 90 } });
  try {
    // The owner deletes one at once (the session lasts 12 h, so before the clock moves on).
    const doomed = await start();
    await say(doomed, 'delete me');
    const del = await s.call('DELETE', `/v1/widgets/${widgetId}/conversations/${doomed.conversation_id}`, { token });
    assert.equal(del.status, 204);
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/conversations/${doomed.conversation_id}`, { token })).status, 404);
    assert.equal((await say(doomed, 'still here?')).status, 401);

    const old = await start();
    await say(old, 'hello');
    await visitor('POST', `/v1/conversations/${old.conversation_id}/lead`, { token: old.token, body: { email: 'old@example.com' } });
    await visitor('POST', `/v1/conversations/${old.conversation_id}/end`, { token: old.token });
    clock.advance(89 * 86_400_000);
    const recent = await start();
    await say(recent, 'hi');
    assert.equal(await s.conversations.prune(), 0, 'not yet 90 days');
    clock.advance(2 * 86_400_000);
    assert.equal(await s.conversations.prune(), 1);
    assert.equal(await s.conversations.store.get(old.conversation_id), null);
    assert.equal(await s.conversations.store.lead(old.conversation_id as never), null);
    assert.deepEqual(await s.conversations.store.messages(old.conversation_id as never, 0, 10), []);
    // An open conversation stays whatever its age.
    assert.ok(await s.conversations.store.get(recent.conversation_id));
  } finally {
    await s.stop();
  }
});

test("another tenant's widget and conversations are 404 to the owner routes", async () => {
  const a = await widgetServer();
  try {
    const c = await a.start();
    const { tenantSession } = await import('../../helpers/embedded.js');
    const other = await tenantSession(a.s);
    for (const [method, path] of [
      ['GET', `/v1/widgets/${a.widgetId}/settings`],
      ['PATCH', `/v1/widgets/${a.widgetId}`],
      ['GET', `/v1/widgets/${a.widgetId}/conversations`],
      ['GET', `/v1/widgets/${a.widgetId}/conversations/${c.conversation_id}`],
      ['POST', `/v1/widgets/${a.widgetId}/conversations/${c.conversation_id}/take-over`],
      ['DELETE', `/v1/widgets/${a.widgetId}/conversations/${c.conversation_id}`],
      ['GET', `/v1/widgets/${a.widgetId}/analytics`],
    ] as const) {
      const r = await a.s.call(method, path, { token: other.token, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      assert.equal(r.status, 404, `${method} ${path}`);
    }
    assert.equal((await a.s.call('GET', `/v1/widgets/${a.widgetId}/conversations`)).status, 401);
  } finally {
    await a.s.stop();
  }
});
