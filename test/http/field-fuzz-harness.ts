import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Logger } from '../../src/log.js';
import { seededRandom } from '../../src/random.js';
import type { TestServer } from '../helpers/embedded.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';
import { problem } from './route-fuzz-harness.js';

/**
 * A seeded fuzz of every JSON body a route reads: a valid body per route, then each of its
 * fields (at any depth) replaced by a hostile value, and the body itself replaced by a few
 * hostile shapes. Every answer must be a success or an error in the documented shape (never a
 * 500, never a dropped connection), a refused request must change nothing in the database,
 * and no request may log a fault. The route fuzz (route-fuzz-harness) sends the same broken
 * bodies to every route; this one goes inside each route's own fields.
 */

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/**
 * Values put in place of a field. JSON text, since some (2^53 + 1, 1e400, -0, a lone
 * surrogate escape) do not survive JSON.stringify as written.
 */
const HOSTILE_VALUES: string[] = [
  'null',
  'true',
  '0',
  '-0',
  '-1',
  '0.5',
  '9007199254740993',
  '-9007199254740993',
  '1e308',
  '1e400',
  '"NaN"',
  '"Infinity"',
  '"-1"',
  '"1e3"',
  '"0x10"',
  '""',
  '" "',
  JSON.stringify('a'.repeat(100_000)),
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\u0000"',
  '"\\u202e\\u0627\\u0644"',
  JSON.stringify(`e${'\u0301'.repeat(5000)}`),
  JSON.stringify('😀'.repeat(300)),
  '"../../../etc/passwd"',
  '"http://169.254.169.254/latest/meta-data/"',
  '"javascript:alert(1)"',
  '"%00%2F.."',
  '[]',
  '[null]',
  JSON.stringify(Array.from({ length: 10_000 }, () => 'x')),
  '{}',
  '{"__proto__": {"admin": true}}',
  JSON.stringify(nested(60)),
  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
];

/** No error answer needs more: 50 details of a path and a message quoting at most 64 characters. */
const MAX_ERROR_BYTES = 24 * 1024;

/** Whole bodies in place of the route's object. */
const HOSTILE_BODIES: string[] = ['[]', '[{}]', 'null', '0', '""', '{}', '{"":1}', JSON.stringify({ a: 'x'.repeat(1_100_000) })];

export interface BodyRoute {
  method: string;
  path: string;
  headers: (method: string, path: string, body: string) => Record<string, string>;
  /** A body the route accepts (or at least reads through its validation). */
  body: unknown;
  /** Refused requests may still change these tables (counted attempts and the like). */
  volatile?: string[];
}

/** Every JSON path of a value: ['a'], ['a', 0], ['a', 0, 'b'] …, with the value itself first ([]). */
function pathsOf(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...pathsOf(x, [...prefix, i])));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...pathsOf(x, [...prefix, k]));
  return out;
}

/** The JSON text of `body` with the value at `path` replaced by the JSON text `value`. */
function replaced(body: unknown, path: (string | number)[], value: string): string {
  if (path.length === 0) return value;
  const marker = `\u0001marker${Math.random()}\u0001`;
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  at[path[path.length - 1]!] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), value);
}

/**
 * A digest of every table's rows but the volatile ones (and columns recording last use), read
 * through one read-only connection kept open; nothing is read again while no commit happened.
 */
function snapshotter(file: string): { read(volatile: ReadonlySet<string>): Map<string, string>; close(): void } {
  let db: Database.Database | null = null;
  let lastVersion = -1;
  let last = new Map<string, string>();
  let lastVolatile: ReadonlySet<string> | null = null;
  const statements = new Map<string, Database.Statement>();
  return {
    read(volatile) {
      db ??= new Database(file, { readonly: true, fileMustExist: true });
      const version = db.pragma('data_version', { simple: true }) as number;
      if (version === lastVersion && volatile === lastVolatile) return last;
      const out = new Map<string, string>();
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
      for (const { name } of tables) {
        if (volatile.has(name)) continue;
        let statement = statements.get(name);
        if (!statement) {
          const cols = (db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[])
            .map((c) => c.name)
            .filter((c) => !/last_used|last_seen/.test(c));
          statement = db.prepare(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM "${name}"`).raw();
          statements.set(name, statement);
        }
        const lines = statement
          .all()
          .map((r) => JSON.stringify(r, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)))
          .sort();
        out.set(name, createHash('sha256').update(lines.join('\n')).digest('hex'));
      }
      [lastVersion, last, lastVolatile] = [version, out, volatile];
      return out;
    },
    close() {
      db?.close();
      db = null;
    },
  };
}

function changedTables(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
}

/**
 * Tables that change without a request: sessions record their use, and the webhook dispatcher
 * works through deliveries (and counts an endpoint's failures) in the background. A refused
 * request that recorded an event still shows in webhook_events.
 */
const ALWAYS_VOLATILE = ['sessions', 'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints'];

interface FieldFuzzOptions {
  seed: number;
  /** How many (path, value) pairs each route gets at most, drawn with the seed. */
  perRoute: number;
}

/** The server fuzzed: its port, and a digest of its state (by table) when it has one to compare. */
export interface FuzzTarget {
  port: number;
  state?: (volatile: ReadonlySet<string>) => Map<string, string> | Promise<Map<string, string>>;
}

/** An embedded test server, its state read from its SQLite file (close it before the server stops). */
export function embeddedTarget(s: TestServer): FuzzTarget & { close(): void } {
  const reader = snapshotter(join(s.dir, 'test.db'));
  return { port: s.port, state: (volatile) => reader.read(volatile), close: () => reader.close() };
}

/** Drives `routes` on `target`, one request at a time; returns every problem found. */
export async function fuzzFields(target: FuzzTarget, routes: BodyRoute[], faults: string[], options: FieldFuzzOptions): Promise<string[]> {
  const random = seededRandom(options.seed);
  const problems: string[] = [];
  const state = target.state ?? (() => new Map<string, string>());
  for (const route of routes) {
    const volatile = new Set([...ALWAYS_VOLATILE, ...(route.volatile ?? [])]);
    const bodies: { what: string; text: string }[] = HOSTILE_BODIES.map((text) => ({ what: `body ${text.slice(0, 20)}`, text }));
    const pairs: { path: (string | number)[]; value: string }[] = [];
    for (const path of pathsOf(route.body).slice(1)) for (const value of HOSTILE_VALUES) pairs.push({ path, value });
    // An unknown field beside the known ones, at every object of the body.
    for (const path of pathsOf(route.body)) {
      const at = path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], route.body);
      if (at !== null && typeof at === 'object' && !Array.isArray(at))
        pairs.push({ path: [...path, 'zz_unknown'], value: '1' }, { path: [...path, 'k'.repeat(100_000)], value: '1' });
    }
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
    }
    for (const { path, value } of pairs.slice(0, options.perRoute))
      bodies.push({ what: `${path.join('.')} = ${value.slice(0, 40)}`, text: replaced(route.body, path, value) });
    let before = await state(volatile);
    for (const { what, text } of bodies) {
      const faultsBefore = faults.length;
      const path = route.path;
      let answer: RawAnswer;
      try {
        answer = await rawRequest(target.port, {
          method: route.method,
          target: path,
          headers: { 'content-type': 'application/json', ...route.headers(route.method, path, text) },
          body: text,
        });
      } catch (err) {
        problems.push(`${route.method} ${route.path} [${what}]: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const p = problem({ method: route.method, target: path }, answer);
      if (p) problems.push(`${p} [${what}]`);
      // Every quoted value is cut (64 characters, a path 200): an error this long echoes a hostile value whole.
      if (answer.status >= 400 && answer.body.length > MAX_ERROR_BYTES)
        problems.push(`${route.method} ${route.path} [${what}]: a ${answer.status} of ${answer.body.length} bytes`);
      if (faults.length > faultsBefore) problems.push(`${route.method} ${route.path} [${what}]: logged ${faults.slice(faultsBefore).join('; ').slice(0, 300)}`);
      const after = await state(volatile);
      if (answer.status >= 400) {
        const changed = changedTables(before, after);
        if (changed.length > 0) problems.push(`${route.method} ${route.path} [${what}]: ${answer.status} but changed ${changed.join(', ')}`);
      }
      before = after;
    }
  }
  return problems;
}

/** A logger that records every error and warning it is given. */
export function faultLogger(faults: string[]): Logger {
  const record = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    // The webhook dispatcher's and video callbacks' warnings about the fuzz's own unreachable receivers are background work, not the request's.
    if (level === 'warn' && /^webhooks: |^video callback attempt failed/.test(msg)) return;
    faults.push(`${level} ${msg} ${JSON.stringify(fields ?? {}).slice(0, 300)}`);
  };
  return { info() {}, debug() {}, warn: record('warn'), error: record('error') };
}

/** Query parameters the routes read (a route ignores the others). */
const QUERY_NAMES = [
  'limit',
  'cursor',
  'status',
  'since',
  'after',
  'ttl',
  'days',
  'server',
  'property_id',
  'expires',
  'signature',
  'result',
  'widget',
  'filename',
  'token',
  'errors',
  'explain',
  'session_id',
  'format',
];

/** Values for them, as sent (already percent-encoded where needed). */
const QUERY_VALUES = [
  '',
  '0',
  '-1',
  '1.5',
  '1e3',
  '9007199254740993',
  'NaN',
  'Infinity',
  '%00',
  '%ZZ',
  '%F0%9F%98%80',
  '%ED%A0%80',
  '%E2%80%AE',
  'x'.repeat(3000),
  '%2F..%2F..%2Fetc%2Fpasswd',
  '2026-13-45T99:99:99Z',
  '1970-01-01T00:00:00Z',
  '+1',
  '0x10',
  'true',
  '[]',
  '%7B%7D',
];

/** Every route's path with each query parameter set to each hostile value (a seeded sample of `perRoute`); the same checks as fuzzFields. */
export async function fuzzQueries(
  target: FuzzTarget,
  routes: { method: string; path: string; headers: () => Record<string, string> }[],
  faults: string[],
  options: FieldFuzzOptions,
): Promise<string[]> {
  const random = seededRandom(options.seed);
  const problems: string[] = [];
  const state = target.state ?? (() => new Map<string, string>());
  const volatile = new Set(ALWAYS_VOLATILE);
  for (const route of routes) {
    const pairs = QUERY_NAMES.flatMap((name) => QUERY_VALUES.map((value) => `${name}=${value}`));
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
    }
    let before = await state(volatile);
    for (const query of pairs.slice(0, options.perRoute)) {
      const path = `${route.path}?${query}`;
      const faultsBefore = faults.length;
      let answer: RawAnswer;
      try {
        answer = await rawRequest(target.port, { method: route.method, target: path, headers: route.headers() });
      } catch (err) {
        problems.push(`${route.method} ${path.slice(0, 100)}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const p = problem({ method: route.method, target: path }, answer);
      if (p) problems.push(p);
      if (faults.length > faultsBefore) problems.push(`${route.method} ${path.slice(0, 100)}: logged ${faults.slice(faultsBefore).join('; ').slice(0, 300)}`);
      const after = await state(volatile);
      if (answer.status >= 400) {
        const changed = changedTables(before, after);
        if (changed.length > 0) problems.push(`${route.method} ${path.slice(0, 100)}: ${answer.status} but changed ${changed.join(', ')}`);
      }
      before = after;
    }
  }
  return problems;
}
