import { HttpError } from '../../http/errors.js';
import { clientAddressKey } from '../../http/ratelimit.js';
import type { TenantId } from '../../identity/types.js';
import { json } from '../../http/reply.js';
import type { Request } from '../../http/server.js';
import { Fields, isBlank, readJsonObject, SEQ_DIGITS } from '../../http/validate.js';
import { chars, newStream, sse, VISITOR_BODY_MAX_BYTES, type ConversationRouteContext } from './route-context.js';
import { messageView } from './service.js';
import { CONVERSATION_MAX_MESSAGES, LEAD_FIELD_MAX_CHARS, MESSAGE_MAX_CHARS, REASON_MAX_CHARS } from './types.js';
import { conversationStatus } from './views.js';

// The visitor API: public, per widget; every route runs the visitor's checks (address rate,
// origin, the conversation's token) of route-context.ts.

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

/** A widget's public face and opening a conversation on it. */
export function mountVisitorWidgetRoutes(ctx: ConversationRouteContext): void {
  const { service, limits, limit, visitorRoute, preflight, byWidget, refusalHeaders } = ctx;
  const anyone = ctx.server.scoped('public');

  anyone.route('OPTIONS', '/v1/widgets/:id/config', preflight(byWidget), { body: 'none', refusalHeaders });
  anyone.get(
    '/v1/widgets/:id/config',
    visitorRoute(byWidget, async (_req, { widget, settings }) =>
      json(200, { id: widget.id, name: settings.name, color: settings.color, greeting: settings.greeting }),
    ),
    { refusalHeaders },
  );

  anyone.route('OPTIONS', '/v1/widgets/:id/conversations', preflight(byWidget), { body: 'none', refusalHeaders });
  anyone.post(
    '/v1/widgets/:id/conversations',
    visitorRoute(byWidget, async (req, { widget, cors }) => {
      const body = req.body.length === 0 ? {} : readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['visitor_id']);
      const visitorId = f.string('visitor_id', {
        max: 68,
        pattern: /^vis_[A-Za-z0-9_-]{1,64}$/,
        patternHint: 'must look like vis_<id> (as this API returned it)',
      });
      f.done();
      if (visitorId) limit(`widget-visitor:${visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      limit(`widget-conversations:${widget.id}`, limits.widgetConversationsPerWidget, 'per widget (new conversations)', cors);
      const { conversation, token } = await service.open(widget, visitorId ?? null);
      return json(201, { conversation_id: conversation.id, visitor_id: conversation.visitorId, token });
    }),
    { maxBody: VISITOR_BODY_MAX_BYTES, refusalHeaders, credentials: 'public' },
  );
}

/** A conversation's messages (a message answered as a stream) and its event stream; every preflight of a conversation's routes. */
export function mountVisitorConversationRoutes(ctx: ConversationRouteContext): void {
  const { service, limits, limit, visitorRoute, preflight, byConversation, byConversationId, visitorToken, refusalHeaders } = ctx;
  const anyone = ctx.server.scoped('public');
  /** A live stream counted against the caps of its client address and tenant (refused past them), its place given back when it closes. */
  const admittedStream = (req: Request, tenant: TenantId) => {
    const release = service.streamCaps.admit(clientAddressKey(req.remoteAddress), tenant);
    const stream = newStream(req);
    stream.onClose(release);
    return stream;
  };

  const conversationPaths = ['messages', 'events', 'lead', 'escalate', 'end'];
  for (const p of conversationPaths) anyone.route('OPTIONS', `/v1/conversations/:id/${p}`, preflight(byConversationId), { body: 'none', refusalHeaders });

  anyone.post(
    '/v1/conversations/:id/messages',
    visitorRoute(byConversation, async (req, { conversation, widget, cors }) => {
      const c = conversation!;
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['text']);
      const text = f.string('text', { required: true, max: Number.MAX_SAFE_INTEGER });
      if (text !== undefined && chars(text) > MESSAGE_MAX_CHARS) f.problem('text', `must be at most ${MESSAGE_MAX_CHARS} characters, got ${chars(text)}`);
      if (text !== undefined && isBlank(text)) f.problem('text', 'must not be blank');
      f.done();
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      limit(`widget-conversation:${c.id}`, limits.widgetConversationMessages, 'messages per conversation', cors);
      limit(`widget-messages:${widget.id}`, limits.widgetMessagesPerWidget, 'per widget (messages)', cors);
      if (c.status === 'ended') throw new HttpError('conflict', 'The conversation has ended; start a new one.');
      if (c.messageCount >= CONVERSATION_MAX_MESSAGES)
        throw new HttpError('plan_limit', `A conversation holds at most ${CONVERSATION_MAX_MESSAGES} messages; start a new one.`);
      const stream = admittedStream(req, widget.tenantId);
      // The reply streams after the headers; a failure from here on ends the stream with an `error` event.
      service.message(c, text!, stream).catch((err: unknown) => {
        stream.send(
          'error',
          err instanceof HttpError ? err.toBody().error : { code: 'internal', message: 'The reply failed; please send your message again.' },
        );
        stream.end();
      });
      return sse(req, stream, cors);
    }),
    { maxBody: VISITOR_BODY_MAX_BYTES, refusalHeaders, credentials: visitorToken },
  );

  anyone.get(
    '/v1/conversations/:id/messages',
    visitorRoute(byConversation, async (req, { conversation }) => {
      const after = afterParam(req);
      const messages = await service.store.messages(conversation!.id, after, CONVERSATION_MAX_MESSAGES);
      return json(200, { conversation: conversationStatus(conversation!), messages: messages.map(messageView) });
    }),
    { refusalHeaders },
  );

  anyone.get(
    '/v1/conversations/:id/events',
    visitorRoute(byConversation, async (req, { conversation, widget, cors }) => {
      const after = afterParam(req);
      const stream = admittedStream(req, widget.tenantId);
      try {
        await service.subscribe(conversation!, stream, after);
      } catch (err) {
        // Never answered: its heartbeat would run on and its place stay taken.
        stream.end();
        throw err;
      }
      return sse(req, stream, cors);
    }),
    { refusalHeaders },
  );
}

/** What a visitor does to a conversation: leave a lead, ask for a person, end it. */
export function mountVisitorActionRoutes(ctx: ConversationRouteContext): void {
  const { service, limits, limit, visitorRoute, byConversation, visitorToken, refusalHeaders } = ctx;
  const anyone = ctx.server.scoped('public');

  anyone.post(
    '/v1/conversations/:id/lead',
    visitorRoute(byConversation, async (req, { conversation, cors }) => {
      const c = conversation!;
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['name', 'email', 'phone']);
      const name = f.string('name', { max: LEAD_FIELD_MAX_CHARS, oneLine: true });
      const email = f.string('email', { max: LEAD_FIELD_MAX_CHARS, oneLine: true });
      const phone = f.string('phone', { max: LEAD_FIELD_MAX_CHARS, oneLine: true });
      if (email && !EMAIL.test(email.trim())) f.problem('email', 'must be an e-mail address (name@example.com)');
      if (phone) {
        const digits = phone.replace(/\D/g, '').length;
        if (!/^[+\d\s().-]+$/.test(phone.trim()) || digits < 7 || digits > 15) f.problem('phone', 'must be a phone number of 7 to 15 digits');
      }
      // A field that shows nothing (spaces, a zero-width space) is no detail given.
      const clean = (s: string | undefined) => (s !== undefined && !isBlank(s) ? s.trim() : null);
      if (!clean(name) && !clean(email) && !clean(phone)) f.problem('email', 'give at least a name, an e-mail address or a phone number');
      f.done();
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      await service.lead(c, { name: clean(name), email: clean(email), phone: clean(phone) });
      return json(201, { conversation_id: c.id, has_email: Boolean(clean(email)), has_phone: Boolean(clean(phone)) });
    }),
    { maxBody: VISITOR_BODY_MAX_BYTES, refusalHeaders, credentials: visitorToken },
  );

  anyone.post(
    '/v1/conversations/:id/escalate',
    visitorRoute(byConversation, async (req, { conversation, cors }) => {
      const c = conversation!;
      const body = req.body.length === 0 ? {} : readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['reason']);
      const reason = f.string('reason', { max: REASON_MAX_CHARS });
      f.done();
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      if (c.status === 'ended') throw new HttpError('conflict', 'The conversation has ended.');
      const changed = await service.escalate(c.id, reason ?? 'The visitor asked for a person.');
      return json(200, { conversation_id: c.id, escalated: true, already: !changed });
    }),
    { maxBody: VISITOR_BODY_MAX_BYTES, refusalHeaders, credentials: visitorToken },
  );

  anyone.post(
    '/v1/conversations/:id/end',
    visitorRoute(byConversation, async (_req, { conversation, cors }) => {
      const c = conversation!;
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      await service.end(c.id, 'visitor_left');
      return json(200, { conversation_id: c.id, status: 'ended' });
    }),
    { body: 'none', refusalHeaders },
  );
}

/** `?after=SEQ` or the Last-Event-ID of a reconnecting stream: replies after that message. */
function afterParam(req: Request): number {
  const raw = req.searchParams().get('after') ?? req.headers['last-event-id'] ?? null;
  if (raw === null || raw === '') return 0;
  if (!SEQ_DIGITS.test(raw)) throw new HttpError('bad_request', 'after must be a message seq this API returned (or 0).');
  return Number(raw);
}
