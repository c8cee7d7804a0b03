import { signRequest } from '../../src/signing/request.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';
import type { Rate } from '../../src/ratelimit/limiter.js';

/** What the traffic needs: the stack's URLs and the two tenants' credentials (set up by run.ts). */
export interface SoakContext {
  api: string;
  sidecar: string;
  /** The flooding tenant: every kind of traffic, as fast as its workers go. */
  flood: { session: string; email: string; serverId: number; serverKey: string; apiKey: string; widgetId: string; propertyId: number; photos: number };
  /** The well-behaved tenant: a steady rate of ticks, pulls and reads. */
  calm: { session: string; serverId: number; serverKey: string; etag: string | null };
  png: Buffer;
  seq: number;
}

/** One request's outcome; `valid` says whether a well-formed request was sent (a 5xx then is a failure of the server). */
export interface Outcome {
  route: string;
  valid: boolean;
  status: number;
  ms: number;
}

export interface Kind {
  route: string;
  /** Share of the flood mix (the calm client uses its own list, each kind at its own pace). */
  weight: number;
  valid: boolean;
  /** The most a well-behaved client sends of this kind per second (it stays inside the limit it is counted against). */
  maxPerS?: number;
  send(ctx: SoakContext): Promise<Response>;
}

/**
 * Half of a rate limit, per second: what a well-behaved client allows itself, so that it is
 * never refused and the soak measures its latency, not 429s (a real sidecar pulls every 15 s).
 */
function withinLimit(rate: Rate): number {
  return rate.limit / (rate.windowMs / 1000) / 2;
}

/** The calm client's config pulls per second: half the server key's limit (120 a minute by default). */
export const CALM_PULLS_PER_S = withinLimit(DEFAULT_LIMITS.serverKey);
/** The calm client's dashboard reads per second: half the session's limit (600 a minute by default). */
export const CALM_READS_PER_S = withinLimit(DEFAULT_LIMITS.session);

const TIMEOUT_MS = 10_000;

function call(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
}

function bearer(token: string, json?: unknown): RequestInit {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (json === undefined) return { headers };
  headers['content-type'] = 'application/json';
  return { method: 'POST', headers, body: JSON.stringify(json) };
}

/** A guard at a gate who hears and sees a player: exercises perception, memory and the reactive layer. */
function tickBody(agent: number, time: number): string {
  return JSON.stringify({
    snapshot: {
      agent,
      time_s: time,
      self_state: { pos: { x: 100, y: 0, z: 40 }, heading_deg: 180, health: 90, blood: 4800, hunger: 35, thirst: 40, has_weapon: true, ammo: 12 },
      targets: [{ id: 7, kind: 'player', pos: { x: 110, y: 0, z: 44 }, hostile: false, visible: true, name: 'Sam' }],
      route: [
        { x: 100, y: 0, z: 40 },
        { x: 100, y: 0, z: 90 },
      ],
    },
    profile: { name: 'Gate guard', role: 'guard' },
  });
}

function tick(ctx: SoakContext, agent: number): Promise<Response> {
  const body = tickBody(agent, 10 + (ctx.seq % 100_000));
  return call(`${ctx.sidecar}/tick`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

/** A signed pull, conditional once an ETag is known; the nonce keeps each signature new (replay protection). */
function pull(ctx: SoakContext, serverId: number, key: string, etag: string | null): Promise<Response> {
  const target = `/v1/config?server=${serverId}&nonce=${ctx.seq}`;
  return call(ctx.api + target, { headers: { ...signRequest(key, { method: 'GET', target }), ...(etag ? { 'if-none-match': etag } : {}) } });
}

function telemetry(ctx: SoakContext): Promise<Response> {
  const target = `/v1/telemetry?nonce=${ctx.seq}`;
  const body = JSON.stringify({
    serverId: String(ctx.flood.serverId),
    ts: new Date().toISOString(),
    botCount: 12,
    playersOnline: 30,
    linesSpoken: 4,
    spendUsd: 0.01,
    events: [
      { kind: 'spoke', count: 4 },
      { kind: 'spawn', count: 1 },
    ],
  });
  return call(ctx.api + target, {
    method: 'POST',
    headers: { ...signRequest(ctx.flood.serverKey, { method: 'POST', target, body }), 'content-type': 'application/json' },
    body,
  });
}

/** Photos go to the current property; a fresh one is made before the per-property cap is reached. */
async function upload(ctx: SoakContext): Promise<Response> {
  if (ctx.flood.photos >= 90) {
    ctx.flood.photos = 0;
    const created = await call(
      `${ctx.api}/v1/properties`,
      bearer(ctx.flood.apiKey, { title: `Soak ${ctx.seq}`, address: '1 Soak Road', city: 'Lyon', price: 1, currency: 'EUR', bedrooms: 1 }),
    );
    if (created.status === 201) ctx.flood.propertyId = ((await created.json()) as { id: number }).id;
    else await created.arrayBuffer();
  }
  ctx.flood.photos++;
  const form = new FormData();
  form.append('photos', new Blob([ctx.png], { type: 'image/png' }), 'soak.png');
  return call(`${ctx.api}/v1/properties/${ctx.flood.propertyId}/photos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.flood.apiKey}` },
    body: form,
  });
}

/** Requests no client should send: each must be a 4xx in the error shape. */
const MALFORMED: ((ctx: SoakContext) => Promise<Response>)[] = [
  (ctx) => call(`${ctx.api}/v1/assets/%/file`),
  (ctx) => call(`${ctx.api}/v1/billing/offline/%ZZ/complete`),
  (ctx) => call(`${ctx.api}/v1/servers/%E0%A4%A`, bearer(ctx.flood.session)),
  (ctx) => call(`${ctx.sidecar}/tick`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"snapshot":' }),
  (ctx) => call(`${ctx.sidecar}/tick`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: new Uint8Array([0xc1, 0xff]) }),
  (ctx) => call(`${ctx.api}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[' }),
  (ctx) =>
    call(`${ctx.api}/v1/config?server=%ZZ`, { headers: { authorization: 'Bearer bsk_nothing', 'x-service-timestamp': 'x', 'x-service-signature': 'y' } }),
  (ctx) => call(`${ctx.api}/v1/widgets/${ctx.flood.widgetId}/events`, { ...bearer(ctx.flood.session, { event: 'nope', data: [] }) }),
  (ctx) =>
    call(`${ctx.api}/v1/properties/1/photos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.flood.apiKey}`, 'content-type': 'multipart/form-data; boundary=x' },
      body: '--x\r\nbroken',
    }),
];

/** The flooding tenant's mix. */
export const FLOOD: Kind[] = [
  { route: 'POST /tick', weight: 40, valid: true, send: (ctx) => tick(ctx, 1 + (ctx.seq % 2000)) },
  { route: 'GET /v1/config', weight: 12, valid: true, send: (ctx) => pull(ctx, ctx.flood.serverId, ctx.flood.serverKey, null) },
  { route: 'POST /v1/telemetry', weight: 5, valid: true, send: telemetry },
  { route: 'POST /v1/properties/:id/photos', weight: 3, valid: true, send: upload },
  {
    route: 'POST /v1/widgets/:id/events',
    weight: 10,
    valid: true,
    send: (ctx) =>
      call(
        `${ctx.api}/v1/widgets/${ctx.flood.widgetId}/events`,
        bearer(ctx.flood.session, {
          event: 'lead.captured',
          data: { conversation_id: `ses_${ctx.seq}`, visitor_id: 'vis_1', has_email: true, has_phone: false },
        }),
      ),
  },
  {
    route: 'POST /v1/auth/login (wrong password)',
    weight: 5,
    valid: true,
    send: (ctx) =>
      call(`${ctx.api}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ctx.flood.email, password: `wrong-${ctx.seq}` }),
      }),
  },
  {
    route: 'GET /v1/servers/:id/overview',
    weight: 10,
    valid: true,
    send: (ctx) => call(`${ctx.api}/v1/servers/${ctx.flood.serverId}/overview`, bearer(ctx.flood.session)),
  },
  { route: 'malformed', weight: 15, valid: false, send: (ctx) => MALFORMED[ctx.seq % MALFORMED.length]!(ctx) },
];

/** The well-behaved tenant's requests, each kind at a fixed pace (see calmClient). */
export const CALM: Kind[] = [
  { route: 'POST /tick (calm)', weight: 1, valid: true, send: (ctx) => tick(ctx, 5000 + (ctx.seq % 100)) },
  {
    route: 'GET /v1/config (calm)',
    weight: 1,
    valid: true,
    maxPerS: CALM_PULLS_PER_S,
    send: (ctx) => pull(ctx, ctx.calm.serverId, ctx.calm.serverKey, ctx.calm.etag),
  },
  {
    route: 'GET /v1/servers (calm)',
    weight: 1,
    valid: true,
    maxPerS: CALM_READS_PER_S,
    send: (ctx) => call(`${ctx.api}/v1/servers`, bearer(ctx.calm.session)),
  },
];

/** Sends one request of `kind` and reads its answer to the end. */
export async function shoot(kind: Kind, ctx: SoakContext): Promise<Outcome> {
  ctx.seq++;
  const started = performance.now();
  try {
    const res = await kind.send(ctx);
    await res.arrayBuffer();
    return { route: kind.route, valid: kind.valid, status: res.status, ms: performance.now() - started };
  } catch {
    return { route: kind.route, valid: kind.valid, status: 0, ms: performance.now() - started };
  }
}
