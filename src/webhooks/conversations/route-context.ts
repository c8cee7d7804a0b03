import { HttpError } from '../../http/errors.js';
import { clientAddressKey, overLimit } from '../../http/ratelimit.js';
import { describeRate, type Rate } from '../../ratelimit/limiter.js';
import { empty, type Reply } from '../../http/reply.js';
import type { HttpServer, Request } from '../../http/server.js';
import { bearerToken, type Authenticator } from '../../identity/auth.js';
import type { Resolve } from '../../net/ssrf.js';
import type { WidgetRecord } from '../types.js';
import type { ConversationService } from './service.js';
import { SseStream } from './sse.js';
import { KNOWLEDGE_MAX_BYTES, type ConversationRecord, type WidgetSettings } from './types.js';

/** The largest visitor request body (a message of MESSAGE_MAX_CHARS in JSON, escaped, fits). */
export const VISITOR_BODY_MAX_BYTES = 16 * 1024;
/** The largest settings body (knowledge of KNOWLEDGE_MAX_BYTES, JSON-escaped, fits). */
export const SETTINGS_BODY_MAX_BYTES = 4 * KNOWLEDGE_MAX_BYTES;

export interface ConversationRoutesOptions {
  service: ConversationService;
  auth: Authenticator;
  /** `--allow-private-webhooks`: a widget's model base URL may be plain http and private. */
  allowPrivate: boolean;
  resolve?: Resolve;
  /** 'https' behind TLS: the server's own origin, always allowed to use its widgets (the demo page). */
  scheme: 'http' | 'https';
  /**
   * SERVICE_PUBLIC_URL: behind a TLS-terminating proxy the server's own pages (the demo page)
   * are served from this origin (`https://…`) while the server itself speaks plain http.
   */
  publicUrl?: string;
  now?: () => number;
}

/** The origin of SERVICE_PUBLIC_URL, or null when unset or not a URL. */
function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** A text's length in characters (code points), as the limits count it. */
export const chars = (s: string) => [...s].length;

/** Where the server's own pages are: `scheme://Host`, and the public origin in front of a proxy. */
interface OwnOrigin {
  scheme: 'http' | 'https';
  publicOrigin: string | null;
}

/** Whether a page of `origin` may use the widget: one it lists, or the server's own. */
function originAllowed(req: Request, origin: string, settings: WidgetSettings, own: OwnOrigin): boolean {
  if (origin === own.publicOrigin) return true;
  if (req.headers.host && origin === `${own.scheme}://${req.headers.host}`) return true;
  return settings.allowedOrigins.includes(origin);
}

const corsHeaders = (origin: string): Record<string, string> => ({
  'access-control-allow-origin': origin,
  vary: 'Origin',
  'access-control-expose-headers': 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
});

/** The most characters of a refused Origin its 403 quotes: the header may be as long as a request head. */
const ORIGIN_ECHO_MAX_CHARS = 200;

const shownOrigin = (origin: string) => (chars(origin) > ORIGIN_ECHO_MAX_CHARS ? `${[...origin].slice(0, ORIGIN_ECHO_MAX_CHARS).join('')}…` : origin);

/** The CORS headers for an allowed origin; 403 for a page whose origin the widget does not list. */
function originCheck(req: Request, settings: WidgetSettings, own: OwnOrigin): Record<string, string> {
  const origin = req.headers.origin;
  // Without Origin the caller is not a browser page (browsers send it on every cross-origin
  // call), and a non-browser client could send any Origin: the rate limits bound it instead.
  if (origin === undefined) return {};
  if (!originAllowed(req, origin, settings, own)) {
    throw new HttpError(
      'forbidden',
      `Pages from ${JSON.stringify(shownOrigin(origin))} may not use this widget; its owner lists the allowed origins in the widget's settings.`,
    );
  }
  return corsHeaders(origin);
}

/** `err` with the CORS headers added (the same error when it has none to add). */
function withCors(err: unknown, cors: Record<string, string>): unknown {
  if (!(err instanceof HttpError) || Object.keys(cors).length === 0) return err;
  return new HttpError(err.code, err.message, { ...(err.details ? { details: err.details } : {}), headers: { ...err.headers, ...cors } });
}

/** A server-sent events reply of `stream`, with the visitor's CORS headers. */
export const sse = (req: Request, stream: SseStream, cors: Record<string, string>): Reply => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', ...cors },
  stream: stream.readable,
});

/** A stream that ends when the client goes away. */
export const newStream = (req: Request) => new SseStream(() => req.aborted);

/** What the conversation routes of every resource share: the visitor's checks (rate, origin, token) and the owner's look-ups. */
export type ConversationRouteContext = ReturnType<typeof conversationRouteContext>;

/**
 * The CORS headers an error answer of a visitor route carries, so the page can read it (a
 * suspended tenant's 503, a 429's Retry-After, a 401): those of an allowed origin of the widget
 * the path names (`wid_…`) or whose conversation it names (`ses_…`), whatever its tenant's
 * state; none when there is no Origin, no such widget or conversation, or the origin is not allowed.
 */
async function errorCors(service: ConversationService, req: Request, own: OwnOrigin): Promise<Record<string, string>> {
  const origin = req.headers.origin;
  const id = req.params.id ?? '';
  if (origin === undefined) return {};
  const widgetId = id.startsWith('ses_') ? (await service.store.get(id))?.widgetId : id;
  const settings = widgetId ? await service.settingsOf(widgetId) : null;
  return settings && originAllowed(req, origin, settings, own) ? corsHeaders(origin) : {};
}

/** How a visitor's route finds its widget or conversation: by the widget id, by the conversation's bearer token, or (a preflight) by the conversation id. */
function visitorLookups(service: ConversationRoutesOptions['service'], own: OwnOrigin) {
  const byWidget = async (req: Request) => service.visitorWidget(req.params.id ?? '');
  /** A visitor's route checks its conversation token before the body is read (the routes' credential check). */
  const visitorToken = async (req: Request): Promise<void> => {
    try {
      await service.byToken(req.params.id ?? '', bearerToken(req));
    } catch (err) {
      throw withCors(err, await errorCors(service, req, own).catch(() => ({})));
    }
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

  return { byWidget, visitorToken, byConversation, byConversationId };
}

/** How an owner's route finds the widget and the conversation of its session's tenant. */
function ownerLookups(service: ConversationRoutesOptions['service'], auth: ConversationRoutesOptions['auth']) {
  const widgetOf = async (req: Request) => service.widgetOf((await auth.session(req)).tenant.id, req.params.id ?? '');
  const conversationOf = async (req: Request) => {
    const widget = await widgetOf(req);
    return service.conversationOf(widget.id, req.params.conversationId ?? '');
  };

  return { widgetOf, conversationOf };
}

export function conversationRouteContext(server: HttpServer, options: ConversationRoutesOptions) {
  const { service, auth } = options;
  const now = options.now ?? Date.now;
  const limits = auth.limits;
  const own: OwnOrigin = { scheme: options.scheme, publicOrigin: originOf(options.publicUrl) };

  const limit = (key: string, rate: Rate, what: string, cors: Record<string, string> = {}) => {
    const d = auth.limiter.hit(key, rate, now());
    if (!d.allowed) {
      const err = overLimit(d, `${describeRate(rate)} ${what}`);
      throw new HttpError(err.code, err.message, { headers: { ...err.headers, ...cors } });
    }
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
        limit(`widget-address:${clientAddressKey(req.remoteAddress)}`, limits.widgetAddress, 'per client address');
        const found = await find(req);
        cors = originCheck(req, found.settings, own);
        const reply = await handler(req, { ...found, cors });
        return { ...reply, headers: { ...reply.headers, ...cors } };
      } catch (err) {
        // Refused before the origin was checked (the address limit, an unknown token, a suspended
        // tenant): the CORS headers are looked up for the answer, so the page can still read it.
        throw withCors(err, Object.keys(cors).length > 0 ? cors : await errorCors(service, req, own).catch(() => ({})));
      }
    };

  const allowed = () =>
    empty(204, {
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'Authorization, Content-Type, Last-Event-ID',
      'access-control-max-age': '600',
    });
  /**
   * A preflight: 204 for an allowed origin. A suspended tenant's widget passes it too (a refused
   * preflight stops the browser from sending the call at all), so the call itself gets its 503
   * "unavailable" with the CORS headers and the widget can say so.
   */
  const preflight = (find: (req: Request) => Promise<{ settings: WidgetSettings; widget: WidgetRecord }>) => {
    const route = visitorRoute(find, async () => allowed());
    return async (req: Request): Promise<Reply> => {
      try {
        return await route(req);
      } catch (err) {
        if (!(err instanceof HttpError) || err.code !== 'unavailable' || !err.headers?.['access-control-allow-origin']) throw err;
        const reply = allowed();
        return { ...reply, headers: { ...reply.headers, ...err.headers } };
      }
    };
  };

  /** A visitor route's RouteOptions.refusalHeaders: a body over the limit (413) is readable by the page too. */
  const refusalHeaders = (req: Request) => errorCors(service, req, own);

  return {
    server,
    options,
    service,
    refusalHeaders,
    limits,
    now,
    limit,
    visitorRoute,
    ...visitorLookups(service, own),
    preflight,
    ...ownerLookups(service, auth),
  };
}
