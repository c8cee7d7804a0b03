import assert from 'node:assert/strict';
import { ERRORS } from '../../src/http/errors.js';
import { signRequest } from '../../src/signing/request.js';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import type { DatabaseLocation } from '../../src/store/database.js';
import { rawRequest, type RawAnswer, type RawRequest } from '../helpers/raw-http.js';

/**
 * Drives every registered route with malformed paths, percent-encodings, methods, headers and
 * bodies. Every answer must be a success or an error in the documented shape (never a 500,
 * never a dropped connection), and the process must still answer afterwards.
 */

/** Values put in place of each path parameter (and of a wildcard). */
const BAD_SEGMENTS = [
  '%',
  '%ZZ',
  '%E0%A4%A',
  '%00',
  '%FF%FE',
  '%2e%2e',
  '..',
  '-1',
  '-0',
  '1.0',
  '1e309',
  '99999999999999999999999',
  'null',
  'a'.repeat(4000),
  // Well-formed UTF-8 that is not an id (an accent, an emoji, an RTL override, a zero-width space, U+FFFF), and
  // forms no decoder may accept: an overlong '/', an encoded surrogate.
  '%C3%A9',
  '%F0%9F%98%80',
  '%E2%80%AE1',
  '1%E2%80%8B',
  '%EF%BF%BF',
  '%C0%AF',
  '%ED%A0%80',
];

const BAD_QUERIES = [
  '?%',
  '?server=%ZZ&%=%',
  '?a[b]=c&a=1&a=2',
  '?server=1&server=1&limit=1&limit=2&token=secret&token=x',
  `?x=${'%41'.repeat(2000)}`,
  '?limit=0&cursor=%',
  `?limit=99999999999999999999&cursor=${Buffer.from('v1:9999999999999999999').toString('base64url')}`,
  // Today's cursor form with a digest no list made: it passes the form check and stops at the digest.
  `?cursor=${Buffer.from('v2:999999999999999:AAAAAAAAAAAAAAAA').toString('base64url')}`,
  // Digits that are not ASCII (fullwidth, Arabic-Indic), -0, a float, an exponent, an emoji and an overlong form as values.
  '?limit=%EF%BC%91&days=%D9%A1&ttl=-0&since=1e308&status=%F0%9F%98%80&server=%C0%AF',
];

interface Body {
  type?: string;
  data: string | Buffer;
}

const BAD_BODIES: Body[] = [
  { type: 'application/json', data: '' },
  { type: 'application/json; charset=utf-16', data: '{}' },
  { type: 'application/json', data: '{' },
  { type: 'application/json', data: 'null' },
  { type: 'application/json', data: '[]' },
  { type: 'application/json', data: '"x"' },
  { type: 'application/json', data: '{"__proto__":{"x":1},"constructor":{"prototype":{"y":1}}}' },
  { type: 'application/json', data: `${'['.repeat(5000)}${']'.repeat(5000)}` },
  {
    type: 'application/json',
    data: JSON.stringify({
      name: 1,
      plan: [],
      email: {},
      password: null,
      url: 7,
      event: [],
      data: 'x',
      version: 'a',
      bundle: 'x',
      snapshot: [],
      serverId: {},
      price: 'x',
      photos: 1,
      format: 9,
      title: [],
      status: 5,
      events: 'x',
      reportId: 3,
      limits: [],
      propertyId: {},
      secret: 1,
      enabled: 'yes',
    }),
  },
  { type: 'application/json', data: '{"id":1e309,"version":-1,"name":"\\u0000","count":9007199254740993}' },
  // Numbers at the edges of every numeric field a route may read: 1e308, -0, a fraction, a negative.
  {
    type: 'application/json',
    data: '{"version":1e308,"property_id":-0,"limit":0.5,"rate_limit":-1e308,"expires_in_days":1e308,"price":-0,"bedrooms":1e308,"bathrooms":0.25,"area":-1,"botCount":1e308,"spendUsd":-0,"ttl":1e308,"days":-0}',
  },
  // A key given twice, and an array or a string where each object is expected.
  { type: 'application/json', data: '{"name":"a","name":"b","url":"x","url":"y","events":{"0":"lead.captured"},"agent":[],"context":"x","photos":[[]]}' },
  { type: 'application/json', data: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) },
  { type: 'application/json; charset=utf-16', data: '{}' },
  { type: 'application/msgpack', data: Buffer.from([0xc1, 0xdf, 0xff, 0xff, 0xff, 0xff]) },
  {
    type: 'multipart/form-data; boundary=x',
    data: '--x\r\nContent-Disposition: form-data; name="photos"; filename="../../etc/passwd"\r\nContent-Type: image/jpeg\r\n\r\nabc\r\n--x',
  },
  { type: 'multipart/form-data', data: 'no boundary' },
  // A boundary given twice, and a file name whose bytes are not UTF-8 (Latin-1).
  { type: 'multipart/form-data; boundary=x; boundary=y', data: '--y\r\nContent-Disposition: form-data; name="p"; filename="a.png"\r\n\r\nabc\r\n--y--\r\n' },
  {
    type: 'multipart/form-data; boundary=x',
    data: Buffer.from('--x\r\nContent-Disposition: form-data; name="p"; filename="Fa\xe7ade.png"\r\nContent-Type: image/png\r\n\r\nabc\r\n--x--\r\n', 'latin1'),
  },
  // Text meant for a header or a line, in every text field a route may read: a line break with a
  // header after it, an RTL override, a lone surrogate, and a name far over any limit.
  {
    type: 'application/json',
    data: JSON.stringify({
      name: 'a\r\nSet-Cookie: x=1',
      title: '\u202egnp.exe',
      address: '\ud800',
      city: 'c'.repeat(200_000),
      url: 'http://127.0.0.1:9/\r\nX-Injected: 1',
      filename: '..\\..\\x\r\n.png',
      email: 'a@example.com\r\nBcc: b@example.com',
      description: '\u0000',
    }),
  },
  // A MessagePack map giving one key twice.
  { type: 'application/msgpack', data: Buffer.from([0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02]) },
  { type: 'text/plain', data: 'hello' },
  { data: Buffer.alloc(3000, 0) },
];

const BAD_HEADERS: Record<string, string>[] = [
  { authorization: 'Bearer' },
  { authorization: 'Bearer %' },
  { authorization: `Bearer ${'a'.repeat(6000)}` },
  { authorization: 'Basic Zm9vOmJhcg==' },
  { authorization: `Bearer bsk_${'z'.repeat(40)}` },
  { 'x-service-timestamp': '99999999999999999999', 'x-service-signature': 'zz' },
  { 'if-none-match': '"v1", W/, *, "' },
  { range: 'bytes=abc' },
  { range: 'bytes=99999999999999999999-' },
  { range: 'bytes=5-1, 0-0, -0' },
  { 'content-type': 'application/json; charset=utf-16' },
  { 'x-forwarded-for': '999.1.1.1, %, ::zz' },
  { cookie: 'c'.repeat(6000) },
  { 'content-encoding': 'gzip' },
  { 'content-encoding': 'identity\r\ncontent-encoding: br' },
  // Written raw, so a value with a line break sends the header twice.
  { authorization: 'Bearer a\r\nauthorization: Bearer b', 'content-type': 'application/json\r\ncontent-type: text/plain' },
];

/** Methods a route does not serve. (A method token uWS does not know, such as FOO, is refused by its parser before any callback runs: the connection closes.) */
const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

interface Route {
  pattern: string;
  methods: string[];
}

interface Target {
  /** A path for the pattern with every parameter filled in by `fill`. */
  path(pattern: string, fill: (name: string) => string): string;
}

const TARGET: Target = {
  path: (pattern, fill) =>
    pattern
      .split('/')
      .map((seg) => (seg.startsWith(':') ? fill(seg.slice(1)) : seg === '*' ? fill('*') : seg))
      .join('/'),
};

/** Checks one answer; returns a description of what is wrong, or null. */
export function problem(r: RawRequest, a: RawAnswer): string | null {
  const what = `${r.method} ${r.target.slice(0, 100)}`;
  if (a.status === 0) return `${what}: connection closed without an answer`;
  if (a.status >= 500 && a.status !== 503) return `${what}: ${a.status} ${a.body.toString('utf8').slice(0, 200)}`;
  if (a.status < 400 || r.method === 'HEAD') return null;
  if (!(a.headers['content-type'] ?? '').startsWith('application/json')) return `${what}: ${a.status} with content-type ${a.headers['content-type']}`;
  let parsed: { error?: { code?: string; message?: string }; errorCode?: string; errorDetails?: string };
  try {
    parsed = JSON.parse(a.body.toString('utf8'));
  } catch {
    return `${what}: ${a.status} body is not JSON: ${a.body.toString('utf8').slice(0, 100)}`;
  }
  // The OpenFeature Remote Evaluation Protocol has its own failure shape for an evaluation's 400
  // and 404 (a path no route takes, or one that cannot be decoded, is answered as everywhere).
  if (r.target.startsWith('/ofrep/') && (a.status === 400 || a.status === 404) && parsed.error === undefined) {
    const known = a.status === 404 ? ['FLAG_NOT_FOUND'] : ['PARSE_ERROR', 'INVALID_CONTEXT', 'TARGETING_KEY_MISSING', 'GENERAL'];
    return known.includes(parsed.errorCode ?? '') && typeof parsed.errorDetails === 'string'
      ? null
      : `${what}: ${a.status} not OFREP's failure shape: ${a.body.toString('utf8').slice(0, 200)}`;
  }
  const code = parsed.error?.code as keyof typeof ERRORS | undefined;
  if (!code || !(code in ERRORS) || typeof parsed.error?.message !== 'string')
    return `${what}: ${a.status} not the error shape: ${a.body.toString('utf8').slice(0, 200)}`;
  if (ERRORS[code].status !== a.status) return `${what}: code ${code} answered with ${a.status}`;
  return null;
}

/** A request with, optionally, a check of its answer beyond the error shape (null when it holds). */
type Probe = RawRequest & { expect?: (a: RawAnswer) => string | null };

/**
 * A method the route does not serve: 405 `method_not_allowed` with `Allow` naming the methods it
 * does, or for OPTIONS (where the route declares none of its own) 204 with the same `Allow`.
 */
export function refusedMethod(route: Route, method: string): (a: RawAnswer) => string | null {
  const allow = route.methods.join(', ');
  const status = method === 'OPTIONS' ? 204 : 405;
  return (a) =>
    a.status === status && a.headers.allow === allow
      ? null
      : `${method} ${route.pattern}: ${a.status} with Allow ${JSON.stringify(a.headers.allow)}, expected ${status} with Allow ${JSON.stringify(allow)}`;
}

/** Every request a route gets: bad segments, bad queries, bad bodies, bad headers, other methods. */
export function requestsFor(
  route: Route,
  good: (name: string) => string,
  auth: (method: string, target: string, body?: Buffer | string) => Record<string, string>,
): Probe[] {
  const out: Probe[] = [];
  const goodPath = TARGET.path(route.pattern, good);
  for (const method of route.methods) {
    const hasParams = route.pattern.includes(':') || route.pattern.includes('*');
    if (hasParams) {
      for (const bad of BAD_SEGMENTS) {
        const target = TARGET.path(route.pattern, () => bad);
        out.push({ method, target, headers: auth(method, target) });
        out.push({ method, target });
      }
    }
    for (const q of BAD_QUERIES) {
      const target = goodPath + q;
      out.push({ method, target, headers: auth(method, target) });
    }
    for (const b of BAD_BODIES) {
      const headers = { ...auth(method, goodPath, b.data), ...(b.type ? { 'content-type': b.type } : {}) };
      out.push({ method, target: goodPath, headers, body: b.data });
    }
    for (const h of BAD_HEADERS) {
      out.push({ method, target: goodPath, headers: { ...auth(method, goodPath, '{}'), 'content-type': 'application/json', ...h }, body: '{}' });
    }
    out.push({ method, target: `${goodPath}//` });
  }
  for (const method of OTHER_METHODS) {
    if (!route.methods.includes(method)) out.push({ method, target: goodPath, headers: auth(method, goodPath), expect: refusedMethod(route, method) });
  }
  return out;
}

/** Sends the requests a few at a time; collects every problem. */
export async function drive(port: number, requests: Probe[], problems: string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < requests.length) {
      const r = requests[next++]!;
      try {
        const a = await rawRequest(port, r);
        const p = problem(r, a) ?? r.expect?.(a) ?? null;
        if (p) problems.push(p);
      } catch (err) {
        problems.push(`${r.method} ${r.target.slice(0, 100)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
}

/** Routes that take away the credentials the others use run last. */
export function destructiveLast(routes: Route[]): Route[] {
  const destructive = (r: Route) => /suspend|\/keys\/|api-keys\/|logout|rotate/.test(r.pattern) || r.methods.includes('DELETE');
  return [...routes.filter((r) => !destructive(r)), ...routes.filter(destructive)];
}

/** Every route of a `serve` on `database` (SQLite when omitted), driven with the malformed requests above. */
export async function fuzzServe(database?: DatabaseLocation): Promise<void> {
  const s = await startTestServer({ allowPrivateWebhooks: true, ...(database ? { database } : {}) });
  try {
    const { tenantId, token } = await tenantSession(s);
    const server = await s.call('POST', '/v1/servers', { token, body: { name: 'fuzz' } });
    const serverKey = await s.call('POST', `/v1/servers/${server.body.id}/keys`, { token });
    const apiKey = await s.call('POST', '/v1/api-keys', { token, body: { name: 'fuzz' } });
    const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'fuzz' } });
    const endpoint = await s.call('POST', `/v1/widgets/${widget.body.id}/webhooks`, {
      token,
      body: { url: 'http://127.0.0.1:9/hook', events: ['lead.captured'] },
    });
    const property = await s.call('POST', '/v1/properties', {
      token: apiKey.body.key,
      body: { title: 'Flat', address: '1 Road', city: 'Paris', price: 1, currency: 'EUR', bedrooms: 1 },
    });
    for (const r of [server, serverKey, apiKey, widget, endpoint, property]) assert.ok(r.status < 300, JSON.stringify(r.body));

    const ids: Record<string, string> = {
      tenants: String(tenantId),
      servers: String(server.body.id),
      widgets: String(widget.body.id),
      properties: String(property.body.id),
    };
    const auth =
      (pattern: string) =>
      (method: string, target: string, body?: Buffer | string): Record<string, string> => {
        if (pattern.startsWith('/v1/admin')) return { authorization: `Bearer ${ADMIN_TOKEN}` };
        if (/^\/v1\/(config|telemetry)/.test(pattern)) return signRequest(serverKey.body.key, { method, target, ...(body !== undefined ? { body } : {}) });
        if (/^\/v1\/(properties|videos|assets|callback-secret)/.test(pattern)) return { authorization: `Bearer ${apiKey.body.key}` };
        return { authorization: `Bearer ${token}` };
      };
    const good =
      (pattern: string) =>
      (name: string): string => {
        if (name === 'id') return ids[pattern.split('/')[pattern.startsWith('/v1/admin') ? 3 : 2]!] ?? '1';
        if (name === 'endpointId') return String(endpoint.body.id);
        if (name === '*') return 'main.js';
        return '1';
      };
    const routes = destructiveLast(s.routes());
    assert.ok(routes.length > 40, `only ${routes.length} routes`);
    // Routes added since the fuzz was written: a missing registration fails here, not silently.
    for (const expected of ['/metrics', '/v1/videos', '/v1/videos/:id', '/v1/assets/:id/url', '/v1/properties/:id/photos/:photoId', '/favicon.ico'])
      assert.ok(
        routes.some((r) => r.pattern === expected),
        expected,
      );
    const problems: string[] = [];
    for (const route of routes) await drive(s.port, requestsFor(route, good(route.pattern), auth(route.pattern)), problems);
    assert.deepEqual(problems, []);

    const health = await fetch(`${s.url}/health`);
    assert.equal(await health.text(), 'ok');
  } finally {
    await s.stop();
  }
}
