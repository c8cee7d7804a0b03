import type { Request } from './server.js';
import { decodeBody, repeatedKey } from './codec.js';
import { echoedKey, HttpError, quoteId, quoteValue, validationFailed, type ErrorDetail } from './errors.js';

/** Reads a JSON request body that must be an object, each of whose objects gives a key once; 415/400 otherwise. */
export function readJsonObject(req: Request): Record<string, unknown> {
  const value = jsonObjectOf(req.body, req.headers['content-type']);
  const key = repeatedKey(typeof req.body === 'string' ? req.body : req.body.toString('utf8'));
  if (key !== null) throw new HttpError('bad_request', `The request body gives the key ${quoteId(key)} twice in one object; give each key once.`);
  return value;
}

/** readJsonObject of a body and its Content-Type as read by a body shortcut (the body a string when it is ASCII). */
export function jsonObjectOf(body: Buffer | string, contentType: string | undefined): Record<string, unknown> {
  const { value } = decodeBody(body, contentType, false);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError('bad_request', 'The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

/** In a `u` regex a surrogate pair is one code point, so `\p{Cs}` matches only a lone surrogate. */
const UNSTORABLE = /[\0\p{Cs}]/u;

/**
 * Why a string cannot be stored as sent, or null when it can: stored as UTF-8 a lone surrogate
 * becomes U+FFFD (the record would read back other than the answer that created it), and
 * PostgreSQL refuses U+0000 in text (a 500 there, and a SQLite row no migration could move).
 */
export function unstorableText(v: string): string | null {
  return UNSTORABLE.test(v) ? 'must be well-formed Unicode without U+0000 (a lone surrogate or a NUL cannot be stored as sent)' : null;
}

/**
 * Text another server wrote (a model's reply), made storable: NULs dropped and each lone
 * surrogate replaced by U+FFFD, so what is streamed to a client is what is stored and read back.
 */
export function storableText(v: string): string {
  return UNSTORABLE.test(v) ? v.replace(/\0|\p{Cs}/gu, (c) => (c === '\0' ? '' : '\ufffd')) : v;
}

/**
 * Characters (Unicode code points) in text without lone surrogates: an emoji is one character,
 * as a person counts it, not the two UTF-16 units of `length`.
 */
export function charCount(s: string): number {
  let pairs = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) pairs++;
  }
  return s.length - pairs;
}

/** The first `max` characters of `s` (code points): never cut inside a surrogate pair, which would store a lone surrogate. */
export function firstChars(s: string, max: number): string {
  if (s.length <= max) return s;
  let units = 0;
  for (let n = 0; n < max && units < s.length; n++) {
    const c = s.charCodeAt(units);
    units += c >= 0xd800 && c <= 0xdbff && units + 1 < s.length ? 2 : 1;
  }
  return s.slice(0, units);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The `n` ASCII digits of `ts` from `at` as a number; -1 when one of them is not a digit. */
function digitsAt(ts: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = ts.charCodeAt(i) - 0x30;
    if (!(d >= 0 && d <= 9)) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * RFC 3339 in form and a real instant: Date.parse would move 2026-02-30 to March 2 and 24:00
 * to the next day. The form is `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, T and Z in either
 * case, read by hand rather than by a regular expression (whose match allocates eleven
 * strings, on every report).
 */
export function isRfc3339(ts: string): boolean {
  const n = ts.length;
  if (n < 20 || ts.charCodeAt(4) !== 0x2d || ts.charCodeAt(7) !== 0x2d || ts.charCodeAt(13) !== 0x3a || ts.charCodeAt(16) !== 0x3a) return false;
  const t = ts.charCodeAt(10);
  if (t !== 0x54 && t !== 0x74) return false;
  const year = digitsAt(ts, 0, 4);
  const month = digitsAt(ts, 5, 2);
  const day = digitsAt(ts, 8, 2);
  const hour = digitsAt(ts, 11, 2);
  const minute = digitsAt(ts, 14, 2);
  const second = digitsAt(ts, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return false;
  let i = 19;
  if (ts.charCodeAt(i) === 0x2e) {
    const from = ++i;
    while (i < n && digitsAt(ts, i, 1) >= 0) i++;
    if (i === from) return false;
  }
  const zone = ts.charCodeAt(i);
  if (zone === 0x5a || zone === 0x7a) {
    if (i + 1 !== n) return false;
  } else if (zone === 0x2b || zone === 0x2d) {
    if (i + 6 !== n || ts.charCodeAt(i + 3) !== 0x3a) return false;
    const offsetHour = digitsAt(ts, i + 1, 2);
    const offsetMinute = digitsAt(ts, i + 4, 2);
    if (offsetHour < 0 || offsetMinute < 0 || offsetHour > 23 || offsetMinute > 59) return false;
  } else return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  return !Number.isNaN(Date.parse(ts));
}

/** Only white space and invisible format characters (zero-width spaces and joiners, direction marks and overrides, U+FEFF, soft hyphens). */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Cf}]*$/u;

/**
 * A text that shows nothing: empty, spaces, or invisible characters only (`"\u200b"`, an
 * RTL override alone). A name like that is no name: it cannot be told apart from another or
 * from none in a list.
 */
export function isBlank(v: string): boolean {
  return INVISIBLE_ONLY.test(v);
}

/** C0 controls, DEL and C1 controls (Unicode's Cc): a newline, a tab, an escape, a backspace. */
const CONTROL = /\p{Cc}/u;

/**
 * Why a one-line text (a name, a title, an address, a key) cannot be kept, or null when it can:
 * a control character in it would break the one line it is shown on (a list, a log line, a
 * title card, an HTTP header made of it), and a terminal would act on an escape.
 */
export function controlCharacter(v: string): string | null {
  const at = v.search(CONTROL);
  if (at < 0) return null;
  const code = v.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
  return `must be one line without control characters (U+0000-U+001F, U+007F-U+009F), got U+${code} at character ${charCount(v.slice(0, at)) + 1}`;
}

/**
 * Collects every field problem of a body before answering, so a client sees all of them in
 * one 422 with `details`.
 */
export class Fields {
  readonly details: ErrorDetail[] = [];

  constructor(
    private readonly body: Record<string, unknown>,
    private readonly prefix = '',
  ) {}

  private path(key: string): string {
    return this.prefix ? `${this.prefix}.${key}` : key;
  }

  problem(key: string, message: string): void {
    this.details.push({ path: this.path(key), message });
  }

  /** A problem for every field of the body not in `known`: for bodies where a typo must not pass as a no-op. */
  onlyKnown(known: readonly string[]): void {
    for (const key of Object.keys(this.body)) if (!known.includes(key)) this.problem(echoedKey(key), `is not a known field (known: ${known.join(', ')})`);
  }

  /**
   * `notBlank`: a name or address of only spaces is no name; refused like an empty one. Such a
   * name is also `oneLine`: no control characters (see controlCharacter).
   */
  string(
    key: string,
    opts: { required?: boolean; max?: number; min?: number; pattern?: RegExp; patternHint?: string; notBlank?: boolean; oneLine?: boolean } = {},
  ): string | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) {
      if (opts.required) this.problem(key, 'is required');
      return undefined;
    }
    if (typeof v !== 'string') return void this.problem(key, `must be a string, got ${typeOf(v)}`);
    const unstorable = unstorableText(v);
    if (unstorable !== null) return void this.problem(key, unstorable);
    const min = opts.min ?? (opts.required ? 1 : 0);
    // Lengths are in characters as a person counts them (code points): 200 emoji are 200 characters.
    const length = v.length < min || (opts.max !== undefined && v.length > opts.max) || min > 1 ? charCount(v) : v.length;
    if (length < min) return void this.problem(key, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
    if (opts.max !== undefined && length > opts.max) return void this.problem(key, `must be at most ${opts.max} characters, got ${length}`);
    if (opts.notBlank && v.length > 0 && isBlank(v)) return void this.problem(key, 'must not be blank');
    if (opts.notBlank || opts.oneLine) {
      const control = controlCharacter(v);
      if (control !== null) return void this.problem(key, control);
    }
    if (opts.pattern && !opts.pattern.test(v)) return void this.problem(key, opts.patternHint ?? 'has an invalid format');
    return v;
  }

  number(key: string, opts: { required?: boolean; min?: number; max?: number; integer?: boolean } = {}): number | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) {
      if (opts.required) this.problem(key, 'is required');
      return undefined;
    }
    // JSON's 1e400 parses as Infinity: name it so, not "got number".
    if (typeof v !== 'number' || !Number.isFinite(v))
      return void this.problem(
        key,
        `must be ${opts.integer ? 'an integer' : 'a finite number'}, got ${typeof v === 'number' ? 'a number out of range (beyond ±1.8e308)' : typeOf(v)}`,
      );
    if (opts.integer && !Number.isInteger(v)) return void this.problem(key, `must be an integer, got ${v}`);
    // Past 2^53 - 1 a JSON number no longer names one integer: 9999999999999999999 parses as
    // 10000000000000000000, so a lookup would answer about a value the client never sent.
    if (opts.integer && !Number.isSafeInteger(v)) return void this.problem(key, `must be an integer no larger than ${Number.MAX_SAFE_INTEGER}, got ${v}`);
    if (opts.min !== undefined && v < opts.min) return void this.problem(key, `must be at least ${opts.min}, got ${v}`);
    if (opts.max !== undefined && v > opts.max) return void this.problem(key, `must be at most ${opts.max}, got ${v}`);
    return v;
  }

  boolean(key: string, opts: { required?: boolean } = {}): boolean | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) {
      if (opts.required) this.problem(key, 'is required');
      return undefined;
    }
    if (typeof v !== 'boolean') return void this.problem(key, `must be a boolean, got ${typeOf(v)}`);
    return v;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], opts: { required?: boolean } = {}): T | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) {
      if (opts.required) this.problem(key, 'is required');
      return undefined;
    }
    if (typeof v !== 'string' || !allowed.includes(v as T)) {
      return void this.problem(key, `must be one of ${allowed.join(', ')}, got ${quoteValue(v)}`);
    }
    return v as T;
  }

  /** Throws a 422 with every collected problem, if any. */
  done(): void {
    if (this.details.length > 0) throw validationFailed(this.details);
  }
}

export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** A resource id as it may be written: 1 to 15 digits, no leading zero (so no two spellings name one resource). */
export const ID_DIGITS = /^[1-9]\d{0,14}$/;

/**
 * A position in a sequence as it may be written (a message seq, `0` for "from the start"): the
 * same form as an id, or 0, so that one position has one spelling.
 */
export const SEQ_DIGITS = /^(?:0|[1-9]\d{0,14})$/;

/** Parses a positive integer path parameter; anything else is a 404 (no such resource). */
export function idParam(value: string | undefined, what = 'resource'): number {
  const n = Number(value);
  if (!value || !ID_DIGITS.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new HttpError('not_found', `No ${what} with id ${quoteId(value ?? '')}.`);
  return n;
}

/**
 * Parses ?limit= within [1, max] (default when absent); a bad value is a 400. Decimal digits
 * only: Number() would also read `1e1`, `0x10`, `+5` and ` 5` as integers.
 */
export function limitParam(req: Request, def: number, max: number): number {
  const raw = req.searchParams().get('limit');
  if (raw === null || raw === '') return def;
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) throw new HttpError('bad_request', `limit must be an integer from 1 to ${max}, got ${quoteValue(raw)}.`);
  return n;
}
