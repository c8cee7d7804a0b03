import { HttpError, validationFailed } from '../../http/errors.js';
import { overLimit } from '../../http/ratelimit.js';
import { describeRate, type Rate } from '../../ratelimit/limiter.js';
import { empty, json, type Reply } from '../../http/reply.js';
import type { HttpServer, Request } from '../../http/server.js';
import { Fields, limitParam, readJsonObject, typeOf } from '../../http/validate.js';
import { bearerToken, type Authenticator } from '../../identity/auth.js';
import { guardUrl, type Resolve } from '../../net/ssrf.js';
import type { WidgetRecord } from '../types.js';
import { messageView, type ConversationService } from './service.js';
import { SseStream } from './sse.js';
import { ANALYTICS_MAX_DAYS } from './store.js';
import {
  ALLOWED_ORIGINS_MAX,
  CONVERSATION_MAX_MESSAGES,
  GREETING_MAX_CHARS,
  INSTRUCTIONS_MAX_CHARS,
  KNOWLEDGE_MAX_BYTES,
  LEAD_FIELD_MAX_CHARS,
  MESSAGE_MAX_CHARS,
  REASON_MAX_CHARS,
  type ConversationId,
  type ConversationRecord,
  type LeadRecord,
  type WidgetSettings,
} from './types.js';

/** The largest visitor request body (a message of MESSAGE_MAX_CHARS in JSON, escaped, fits). */
export const VISITOR_BODY_MAX_BYTES = 16 * 1024;
/** The largest settings body (knowledge of KNOWLEDGE_MAX_BYTES, JSON-escaped, fits). */
export const SETTINGS_BODY_MAX_BYTES = 4 * KNOWLEDGE_MAX_BYTES;
const NAME_MAX = 200;
const MODEL_MAX = 200;
const BASE_URL_MAX = 512;
const API_KEY_MAX = 4096;
const COLOR = /^#[0-9a-fA-F]{6}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

export interface ConversationRoutesOptions {
  service: ConversationService;
  auth: Authenticator;
  /** `--allow-private-webhooks`: a widget's model base URL may be plain http and private. */
  allowPrivate: boolean;
  resolve?: Resolve;
  /** 'https' behind TLS: the server's own origin, always allowed to use its widgets (the demo page). */
  scheme: 'http' | 'https';
  now?: () => number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const chars = (s: string) => [...s].length;

export function conversationView(c: ConversationRecord) {
  return {
    id: c.id,
    widget_id: c.widgetId,
    visitor_id: c.visitorId,
    status: c.status,
    handler: c.handler,
    escalated: c.escalated,
    has_lead: c.hasLead,
    message_count: c.messageCount,
    started_at: iso(c.startedAt),
    last_activity_at: iso(c.lastActivityAt),
    ended_at: iso(c.endedAt),
    ended_reason: c.endedReason,
  };
}

const leadView = (l: LeadRecord) => ({ name: l.name, email: l.email, phone: l.phone, created_at: iso(l.createdAt) });

/** The settings as the owner sees them: the model's key is never shown again, only whether one is set. */
export function settingsView(w: WidgetRecord, s: WidgetSettings) {
  return {
    id: w.id,
    name: s.name,
    color: s.color,
    greeting: s.greeting,
    allowed_origins: s.allowedOrigins,
    agent: {
      instructions: s.agent.instructions,
      knowledge: s.agent.knowledge,
      model: s.agent.model,
      base_url: s.agent.baseUrl,
      api_key_set: s.agent.apiKey !== null,
    },
  };
}

/** `https://shop.example` as a browser sends it in Origin: scheme, host, port; nothing else. */
function normalOrigin(raw: string): string | null {
  try {
    const u = new URL(raw);
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== raw.replace(/\/$/, '')) return null;
    return u.origin;
  } catch {
    return null;
  }
}

/** Mounts the visitor API (public, per widget) and the owner's conversation routes (session). */
export function mountConversationRoutes(server: HttpServer, options: ConversationRoutesOptions): void {
  const { service, auth } = options;
  const anyone = server.scoped('public');
  const full = server.scoped('full');
  const now = options.now ?? Date.now;
  const limits = auth.limits;

  const limit = (key: string, rate: Rate, what: string, cors: Record<string, string> = {}) => {
    const d = auth.limiter.hit(key, rate, now());
    if (!d.allowed) {
      const err = overLimit(d, `${describeRate(rate)} ${what}`);
      throw new HttpError(err.code, err.message, { headers: { ...err.headers, ...cors } });
    }
  };

  /** The CORS headers for an allowed origin; 403 for a page whose origin the widget does not list. */
  const originCheck = (req: Request, settings: WidgetSettings): Record<string, string> => {
    const origin = req.headers.origin;
    // Without Origin the caller is not a browser page (browsers send it on every cross-origin
    // call), and a non-browser client could send any Origin: the rate limits bound it instead.
    if (origin === undefined) return {};
    const own = req.headers.host ? `${options.scheme}://${req.headers.host}` : null;
    if (origin !== own && !settings.allowedOrigins.includes(origin)) {
      throw new HttpError(
        'forbidden',
        `Pages from ${JSON.stringify(origin)} may not use this widget; its owner lists the allowed origins in the widget's settings.`,
      );
    }
    return {
      'access-control-allow-origin': origin,
      vary: 'Origin',
      'access-control-expose-headers': 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
    };
  };

  /** Runs a visitor handler: the address limit first, then the origin check; errors carry the CORS headers so the page can read them. */
  const visitorRoute =
    (
      find: (req: Request) => Promise<{ settings: WidgetSettings; conversation?: ConversationRecord; widget: WidgetRecord }>,
      handler: (
        req: Request,
        ctx: { settings: WidgetSettings; conversation?: ConversationRecord; widget: WidgetRecord; cors: Record<string, string> },
      ) => Promise<Reply>,
    ) =>
    async (req: Request): Promise<Reply> => {
      let cors: Record<string, string> = {};
      try {
        limit(`widget-address:${req.remoteAddress}`, limits.widgetAddress, 'per client address');
        const found = await find(req);
        cors = originCheck(req, found.settings);
        const reply = await handler(req, { ...found, cors });
        return { ...reply, headers: { ...reply.headers, ...cors } };
      } catch (err) {
        if (err instanceof HttpError && Object.keys(cors).length > 0)
          throw new HttpError(err.code, err.message, { ...(err.details ? { details: err.details } : {}), headers: { ...err.headers, ...cors } });
        throw err;
      }
    };

  const byWidget = async (req: Request) => service.visitorWidget(req.params.id ?? '');
  /** A visitor's route checks its conversation token before the body is read (the routes' credential check). */
  const visitorToken = async (req: Request): Promise<void> => {
    await service.byToken(req.params.id ?? '', bearerToken(req));
  };
  /** The conversation of the bearer token, with its widget (suspension checked). */
  const byConversation = async (req: Request) => {
    const conversation = await service.byToken(req.params.id ?? '', bearerToken(req));
    const { widget, settings } = await service.visitorWidget(conversation.widgetId);
    return { widget, settings, conversation };
  };
  /** A preflight names no token: the conversation's widget decides the origin. */
  const byConversationId = async (req: Request) => {
    const c = await service.store.get(req.params.id ?? '');
    if (!c) throw new HttpError('not_found', 'No such conversation.');
    return service.visitorWidget(c.widgetId);
  };

  const preflight = (find: (req: Request) => Promise<{ settings: WidgetSettings; widget: WidgetRecord }>) =>
    visitorRoute(find, async () =>
      empty(204, {
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': 'Authorization, Content-Type, Last-Event-ID',
        'access-control-max-age': '600',
      }),
    );

  const sse = (req: Request, stream: SseStream, cors: Record<string, string>): Reply => ({
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', ...cors },
    stream: stream.readable,
  });
  const newStream = (req: Request) => new SseStream(() => req.aborted);

  // --- the visitor API ---

  anyone.route('OPTIONS', '/v1/widgets/:id/config', preflight(byWidget), { body: 'none' });
  anyone.get(
    '/v1/widgets/:id/config',
    visitorRoute(byWidget, async (_req, { widget, settings }) =>
      json(200, { id: widget.id, name: settings.name, color: settings.color, greeting: settings.greeting }),
    ),
  );

  anyone.route('OPTIONS', '/v1/widgets/:id/conversations', preflight(byWidget), { body: 'none' });
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
      const { conversation, token } = await service.open(widget, visitorId ?? null);
      return json(201, { conversation_id: conversation.id, visitor_id: conversation.visitorId, token });
    }),
    { maxBody: VISITOR_BODY_MAX_BYTES, credentials: 'public' },
  );

  const conversationPaths = ['messages', 'events', 'lead', 'escalate', 'end'];
  for (const p of conversationPaths) anyone.route('OPTIONS', `/v1/conversations/:id/${p}`, preflight(byConversationId), { body: 'none' });

  anyone.post(
    '/v1/conversations/:id/messages',
    visitorRoute(byConversation, async (req, { conversation, cors }) => {
      const c = conversation!;
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['text']);
      const text = f.string('text', { required: true, max: Number.MAX_SAFE_INTEGER });
      if (text !== undefined && chars(text) > MESSAGE_MAX_CHARS) f.problem('text', `must be at most ${MESSAGE_MAX_CHARS} characters, got ${chars(text)}`);
      if (text !== undefined && text.trim() === '') f.problem('text', 'must not be blank');
      f.done();
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      limit(`widget-conversation:${c.id}`, limits.widgetConversationMessages, 'messages per conversation', cors);
      if (c.status === 'ended') throw new HttpError('conflict', 'The conversation has ended; start a new one.');
      if (c.messageCount >= CONVERSATION_MAX_MESSAGES)
        throw new HttpError('plan_limit', `A conversation holds at most ${CONVERSATION_MAX_MESSAGES} messages; start a new one.`);
      const stream = newStream(req);
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
    { maxBody: VISITOR_BODY_MAX_BYTES, credentials: visitorToken },
  );

  anyone.get(
    '/v1/conversations/:id/messages',
    visitorRoute(byConversation, async (req, { conversation }) => {
      const after = afterParam(req);
      const messages = await service.store.messages(conversation!.id, after, CONVERSATION_MAX_MESSAGES);
      return json(200, { conversation: conversationStatus(conversation!), messages: messages.map(messageView) });
    }),
  );

  anyone.get(
    '/v1/conversations/:id/events',
    visitorRoute(byConversation, async (req, { conversation, cors }) => {
      const stream = newStream(req);
      await service.subscribe(conversation!, stream, afterParam(req));
      return sse(req, stream, cors);
    }),
  );

  anyone.post(
    '/v1/conversations/:id/lead',
    visitorRoute(byConversation, async (req, { conversation, cors }) => {
      const c = conversation!;
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['name', 'email', 'phone']);
      const name = f.string('name', { max: LEAD_FIELD_MAX_CHARS });
      const email = f.string('email', { max: LEAD_FIELD_MAX_CHARS });
      const phone = f.string('phone', { max: LEAD_FIELD_MAX_CHARS });
      if (email && !EMAIL.test(email.trim())) f.problem('email', 'must be an e-mail address (name@example.com)');
      if (phone) {
        const digits = phone.replace(/\D/g, '').length;
        if (!/^[+\d\s().-]+$/.test(phone.trim()) || digits < 7 || digits > 15) f.problem('phone', 'must be a phone number of 7 to 15 digits');
      }
      if (!name?.trim() && !email?.trim() && !phone?.trim()) f.problem('email', 'give at least a name, an e-mail address or a phone number');
      f.done();
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      const clean = (s: string | undefined) => (s?.trim() ? s.trim() : null);
      await service.lead(c, { name: clean(name), email: clean(email), phone: clean(phone) });
      return json(201, { conversation_id: c.id, has_email: Boolean(clean(email)), has_phone: Boolean(clean(phone)) });
    }),
    { maxBody: VISITOR_BODY_MAX_BYTES, credentials: visitorToken },
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
    { maxBody: VISITOR_BODY_MAX_BYTES, credentials: visitorToken },
  );

  anyone.post(
    '/v1/conversations/:id/end',
    visitorRoute(byConversation, async (_req, { conversation, cors }) => {
      const c = conversation!;
      limit(`widget-visitor:${c.visitorId}`, limits.widgetVisitor, 'per visitor', cors);
      await service.end(c.id, 'visitor_left');
      return json(200, { conversation_id: c.id, status: 'ended' });
    }),
    { body: 'none' },
  );

  // --- the owner's routes (session) ---

  const widgetOf = async (req: Request) => service.widgetOf((await auth.session(req)).tenant.id, req.params.id ?? '');
  const conversationOf = async (req: Request) => {
    const widget = await widgetOf(req);
    return service.conversationOf(widget.id, req.params.conversationId ?? '');
  };

  full.get('/v1/widgets/:id/settings', async (req) => {
    const widget = await widgetOf(req);
    return json(200, settingsView(widget, await service.settings(widget)));
  });

  full.patch(
    '/v1/widgets/:id',
    async (req) => {
      const widget = await widgetOf(req);
      const body = readJsonObject(req);
      const current = await service.settings(widget);
      const next = await patchSettings(current, body, { allowPrivate: options.allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) });
      await service.store.saveSettings(widget.id, next);
      return json(200, settingsView({ ...widget, name: next.name }, next));
    },
    { maxBody: SETTINGS_BODY_MAX_BYTES },
  );

  full.get('/v1/widgets/:id/conversations', async (req) => {
    const widget = await widgetOf(req);
    const status = req.searchParams().get('status');
    if (status !== null && status !== 'open' && status !== 'ended') throw new HttpError('bad_request', 'status must be open or ended.');
    const cursor = req.searchParams().get('cursor');
    if (cursor !== null && !/^\d{1,15}$/.test(cursor)) throw new HttpError('bad_request', 'cursor is not one this API returned.');
    const page = await service.store.list({
      widgetId: widget.id,
      limit: limitParam(req, 50, 200),
      before: cursor === null ? null : Number(cursor),
      ...(status ? { status } : {}),
    });
    return json(200, { data: page.data.map(conversationView), next_cursor: page.nextCursor === null ? null : String(page.nextCursor) });
  });

  full.get('/v1/widgets/:id/conversations/:conversationId', async (req) => {
    const c = await conversationOf(req);
    const [messages, lead] = await Promise.all([service.store.messages(c.id, 0, CONVERSATION_MAX_MESSAGES), service.store.lead(c.id)]);
    return json(200, { ...conversationView(c), messages: messages.map(messageView), lead: lead ? leadView(lead) : null });
  });

  full.delete('/v1/widgets/:id/conversations/:conversationId', async (req) => {
    const c = await conversationOf(req);
    await service.remove(c.id);
    return empty(204);
  });

  const action = (path: string, run: (c: ConversationRecord) => Promise<unknown>) =>
    full.post(
      `/v1/widgets/:id/conversations/:conversationId/${path}`,
      async (req) => {
        const c = await conversationOf(req);
        await run(c);
        return json(200, conversationView((await service.store.get(c.id)) ?? c));
      },
      { body: 'none' },
    );
  action('take-over', (c) => service.setHandler(c.id, 'human'));
  action('hand-back', (c) => service.setHandler(c.id, 'agent'));
  action('close', (c) => service.end(c.id as ConversationId, 'agent_closed'));

  full.post(
    '/v1/widgets/:id/conversations/:conversationId/reply',
    async (req) => {
      const c = await conversationOf(req);
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['text']);
      const text = f.string('text', { required: true, max: Number.MAX_SAFE_INTEGER });
      if (text !== undefined && chars(text) > MESSAGE_MAX_CHARS) f.problem('text', `must be at most ${MESSAGE_MAX_CHARS} characters, got ${chars(text)}`);
      f.done();
      if (c.status === 'ended') throw new HttpError('conflict', 'The conversation has ended.');
      const m = await service.operatorReply(c, text!);
      return json(201, messageView(m));
    },
    { maxBody: VISITOR_BODY_MAX_BYTES },
  );

  full.get('/v1/widgets/:id/analytics', async (req) => {
    const widget = await widgetOf(req);
    const raw = req.searchParams().get('days');
    const days = raw === null ? 30 : /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
    if (!(days >= 1 && days <= ANALYTICS_MAX_DAYS)) throw new HttpError('bad_request', `days must be an integer from 1 to ${ANALYTICS_MAX_DAYS}.`);
    const to = (Math.floor(now() / 86_400_000) + 1) * 86_400_000;
    const rows = await service.store.analytics(widget.id, to - days * 86_400_000, to);
    return json(200, {
      days: rows.map((d) => ({
        day: d.day,
        conversations: d.conversations,
        leads: d.leads,
        escalations: d.escalations,
        median_response_ms: d.medianResponseMs,
      })),
    });
  });
}

function conversationStatus(c: ConversationRecord) {
  return { id: c.id, status: c.status, handler: c.handler, escalated: c.escalated, ended_reason: c.endedReason };
}

/** `?after=SEQ` or the Last-Event-ID of a reconnecting stream: replies after that message. */
function afterParam(req: Request): number {
  const raw = req.searchParams().get('after') ?? req.headers['last-event-id'] ?? null;
  if (raw === null || raw === '') return 0;
  if (!/^\d{1,15}$/.test(raw)) throw new HttpError('bad_request', 'after must be a message seq this API returned.');
  return Number(raw);
}

/** The settings with a PATCH body applied, every field checked; a 422 naming each problem otherwise. */
export async function patchSettings(
  current: WidgetSettings,
  body: Record<string, unknown>,
  guard: { allowPrivate: boolean; resolve?: Resolve },
): Promise<WidgetSettings> {
  const f = new Fields(body);
  f.onlyKnown(['name', 'color', 'greeting', 'allowed_origins', 'agent']);
  for (const k of ['name', 'color', 'greeting', 'allowed_origins', 'agent'])
    if (body[k] === null) f.problem(k, 'must not be null; leave the field out to keep its value');
  const name = f.string('name', { min: 1, max: NAME_MAX });
  const color = f.string('color', { pattern: COLOR, patternHint: 'must be a colour as #rrggbb' });
  const greeting = f.string('greeting', { max: GREETING_MAX_CHARS });
  let origins: string[] | undefined;
  const rawOrigins = body.allowed_origins;
  if (rawOrigins !== undefined && rawOrigins !== null) {
    if (!Array.isArray(rawOrigins)) f.problem('allowed_origins', `must be an array of origins, got ${typeOf(rawOrigins)}`);
    else if (rawOrigins.length > ALLOWED_ORIGINS_MAX)
      f.problem('allowed_origins', `must list at most ${ALLOWED_ORIGINS_MAX} origins, got ${rawOrigins.length}`);
    else {
      origins = [];
      rawOrigins.forEach((o, i) => {
        const n = typeof o === 'string' && o.length <= 300 ? normalOrigin(o) : null;
        if (n === null) f.problem(`allowed_origins[${i}]`, 'must be an origin: http(s)://host[:port], no path (as https://shop.example)');
        else if (!origins!.includes(n)) origins!.push(n);
      });
    }
  }
  const agent = { ...current.agent };
  const rawAgent = body.agent;
  if (rawAgent !== undefined && rawAgent !== null) {
    if (typeof rawAgent !== 'object' || Array.isArray(rawAgent)) f.problem('agent', `must be an object, got ${typeOf(rawAgent)}`);
    else {
      const a = rawAgent as Record<string, unknown>;
      const g = new Fields(a, 'agent');
      g.onlyKnown(['instructions', 'knowledge', 'model', 'base_url', 'api_key']);
      const instructions = g.string('instructions', { max: INSTRUCTIONS_MAX_CHARS });
      const knowledge = g.string('knowledge', { max: Number.MAX_SAFE_INTEGER });
      if (knowledge !== undefined && Buffer.byteLength(knowledge) > KNOWLEDGE_MAX_BYTES)
        g.problem('knowledge', `must be at most ${KNOWLEDGE_MAX_BYTES} bytes (UTF-8), got ${Buffer.byteLength(knowledge)}`);
      const model = g.string('model', { max: MODEL_MAX });
      const baseUrl = g.string('base_url', { max: BASE_URL_MAX });
      const apiKey = g.string('api_key', { max: API_KEY_MAX });
      if (baseUrl) {
        const verdict = await guardUrl(baseUrl, {
          allowPrivate: guard.allowPrivate,
          admitUnresolved: true,
          ...(guard.resolve ? { resolve: guard.resolve } : {}),
        });
        if (!verdict.ok) g.problem('base_url', verdict.reason);
      }
      f.details.push(...g.details);
      if (instructions !== undefined) agent.instructions = instructions;
      if (knowledge !== undefined) agent.knowledge = knowledge;
      // null (or '') clears the three model fields: back to SERVICE_LLM_* or the rule agent.
      if ('model' in a) agent.model = model || null;
      if ('base_url' in a) agent.baseUrl = baseUrl || null;
      if ('api_key' in a) agent.apiKey = apiKey || null;
    }
  }
  if (f.details.length > 0) throw validationFailed(f.details);
  return {
    name: name ?? current.name,
    color: color ?? current.color,
    greeting: greeting ?? current.greeting,
    allowedOrigins: origins ?? current.allowedOrigins,
    agent,
  };
}
