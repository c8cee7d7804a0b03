/**
 * The plugin protocol: what the sidecar and a plugin child process say to each other over
 * the child's stdin/stdout, one JSON message per line (NDJSON).
 *
 * Why NDJSON rather than length-prefixed MessagePack: every message is small text (a prompt,
 * a line, a file path; audio travels as files, never through the pipe), so a binary framing
 * buys nothing measurable, while NDJSON lets anyone drive a plugin by hand
 * (`echo '{"type":"request","id":1,"method":"health","params":{}}' | node dist/plugins/dialogue.js`)
 * and read its traffic in a log. JSON.stringify escapes newlines inside strings, so a line
 * break always ends a message.
 *
 * This is the only module plugins share with anything; it must not import from src/.
 */

// ---- method payloads ----

export interface HealthResult {
  ok: boolean;
  /** One sentence per problem, each naming the fix. Empty when ok. */
  problems: string[];
  /** Facts worth printing (engine, model, base URL…); scalars only. */
  info: Record<string, string | number | boolean>;
}

export interface TraitsParam {
  [trait: string]: number;
}

/** Everything the dialogue plugin needs to write one line; plain data, copied at request time. */
export interface LineParams {
  game: { name: string; premise: string; goal: string } | null;
  character: {
    name: string;
    role: string;
    traits: TraitsParam;
    themes: string[];
    goal: string;
    emotion: string;
  };
  flavor: string;
  memory: string;
  situation: {
    kind: string;
    doing: string;
    players: Array<{ name: string; distance_m: number }>;
    heard: Array<{ from: string; text: string }>;
    event: string;
  };
  max_chars: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface LineResult {
  text: string;
  model: string;
  usage: Usage;
  cost_usd: number;
}

export interface VoiceParam {
  /** espeak pitch 0–99. */
  pitch: number;
  /** espeak speed, words per minute. */
  speed: number;
  /** espeak voice variant such as "m3" or "f2". */
  variant: string;
  /** Voice name for an OpenAI-compatible /audio/speech server (alloy, echo…). */
  named: string;
}

export interface SynthesizeParams {
  text: string;
  /** File name without directory; the plugin writes `<dir>/<file>`. */
  file: string;
  dir: string;
  voice: VoiceParam;
}

export interface SynthesizeResult {
  file: string;
  bytes: number;
  duration_s: number;
  characters: number;
  engine: string;
}

export interface TranscribeParams {
  /** An audio file the sidecar wrote; the plugin deletes it when done. */
  path: string;
  mime: string;
}

export interface TranscribeResult {
  text: string;
}

/** Every method, its params and its result: the request/response pairs are typed by name. */
export interface MethodMap {
  health: { params: Record<string, never>; result: HealthResult };
  line: { params: LineParams; result: LineResult };
  synthesize: { params: SynthesizeParams; result: SynthesizeResult };
  transcribe: { params: TranscribeParams; result: TranscribeResult };
}
export type MethodName = keyof MethodMap;
export type ParamsOf<M extends MethodName> = MethodMap[M]['params'];
export type ResultOf<M extends MethodName> = MethodMap[M]['result'];

// ---- messages ----

/**
 * Error codes a plugin (or the supervisor on its behalf) reports. `unavailable` carries
 * `retry_after_ms`: the backend is down or throttling and asking again sooner is useless.
 */
export const PLUGIN_ERROR_CODES = ['unavailable', 'bad_request', 'unknown_method', 'internal', 'timeout', 'crashed', 'queue_full', 'closed'] as const;
export type PluginErrorCode = (typeof PLUGIN_ERROR_CODES)[number];

export type LogLevel = 'info' | 'warn' | 'error';

/** Child → parent. */
export type ChildMessage =
  | { type: 'hello'; plugin: string; protocol: 1; methods: MethodName[]; pid: number }
  | { type: 'response'; id: number; result: unknown }
  | { type: 'error'; id: number; code: PluginErrorCode; message: string; retry_after_ms?: number }
  | { type: 'log'; level: LogLevel; message: string; fields?: Record<string, unknown> };

/** Parent → child. */
export type ParentMessage = { type: 'request'; id: number; method: MethodName; params: unknown } | { type: 'shutdown' };

export const PROTOCOL_VERSION = 1;

export function encodeMessage(message: ChildMessage | ParentMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Splits a byte stream into lines. Partial chunks are kept as a list and joined once a
 * newline arrives, so a long line costs one join rather than one concat per chunk.
 */
export class LineSplitter {
  private parts: string[] = [];

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n');
    while (nl !== -1) {
      const piece = chunk.slice(start, nl);
      let line = piece;
      if (this.parts.length > 0) {
        this.parts.push(piece);
        line = this.parts.join('');
        this.parts = [];
      }
      if (line.length > 0) this.onLine(line);
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) this.parts.push(chunk.slice(start));
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses one line from a child; null when it is not a well-formed ChildMessage. */
export function parseChildMessage(line: string): ChildMessage | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObject(v)) return null;
  switch (v.type) {
    case 'hello':
      return typeof v.plugin === 'string' && Array.isArray(v.methods) ? (v as ChildMessage) : null;
    case 'response':
      return typeof v.id === 'number' ? (v as ChildMessage) : null;
    case 'error':
      return typeof v.id === 'number' && typeof v.code === 'string' && typeof v.message === 'string' ? (v as ChildMessage) : null;
    case 'log':
      return typeof v.message === 'string' ? (v as ChildMessage) : null;
    default:
      return null;
  }
}

/** Parses one line from the parent; null when it is not a well-formed ParentMessage. */
export function parseParentMessage(line: string): ParentMessage | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObject(v)) return null;
  if (v.type === 'shutdown') return { type: 'shutdown' };
  if (v.type === 'request' && typeof v.id === 'number' && typeof v.method === 'string') return v as ParentMessage;
  return null;
}

// ---- the plugin side ----

/** An error a handler throws to answer with a specific code. */
export class PluginError extends Error {
  constructor(
    readonly code: PluginErrorCode,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'PluginError';
  }
}

export type Handlers = { [M in MethodName]?: (params: ParamsOf<M>) => Promise<ResultOf<M>> };

export interface PluginContext {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

/**
 * Runs a plugin: says hello, answers requests concurrently (each in its own promise), and
 * exits on `shutdown` or when stdin closes (the parent died), after in-flight requests end.
 */
export function runPlugin(name: string, build: (ctx: PluginContext) => Handlers): void {
  const write = (m: ChildMessage): void => {
    process.stdout.write(encodeMessage(m));
  };
  const ctx: PluginContext = { log: (level, message, fields) => write({ type: 'log', level, message, ...(fields ? { fields } : {}) }) };
  // stdout carries the protocol: a stray console.log from a dependency must not land in it.
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  const handlers = build(ctx);
  let inFlight = 0;
  let stopping = false;
  const maybeExit = (): void => {
    if (stopping && inFlight === 0) process.exit(0);
  };
  const handle = (msg: ParentMessage): void => {
    if (msg.type === 'shutdown') {
      stopping = true;
      maybeExit();
      return;
    }
    const handler = handlers[msg.method] as ((p: unknown) => Promise<unknown>) | undefined;
    if (!handler) {
      write({ type: 'error', id: msg.id, code: 'unknown_method', message: `${name} has no method "${msg.method}"` });
      return;
    }
    inFlight++;
    Promise.resolve()
      .then(() => handler(msg.params))
      .then(
        (result) => write({ type: 'response', id: msg.id, result }),
        (err: unknown) => {
          if (err instanceof PluginError) {
            write({
              type: 'error',
              id: msg.id,
              code: err.code,
              message: err.message,
              ...(err.retryAfterMs !== undefined ? { retry_after_ms: err.retryAfterMs } : {}),
            });
          } else {
            write({ type: 'error', id: msg.id, code: 'internal', message: err instanceof Error ? err.message : String(err) });
          }
        },
      )
      .finally(() => {
        inFlight--;
        maybeExit();
      });
  };
  const splitter = new LineSplitter((line) => {
    const msg = parseParentMessage(line);
    if (msg) handle(msg);
    else ctx.log('warn', 'ignored a malformed message', { line: line.slice(0, 200) });
  });
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => splitter.push(chunk));
  process.stdin.on('end', () => {
    stopping = true;
    maybeExit();
  });
  write({ type: 'hello', plugin: name, protocol: PROTOCOL_VERSION, methods: Object.keys(handlers) as MethodName[], pid: process.pid });
}

// ---- back-off for plugins that call a remote model server ----

function retryAfterFromHeaders(headers: unknown, nowMs: number): number | null {
  if (!headers || typeof (headers as Headers).get !== 'function') return null;
  const h = headers as Headers;
  const ms = Number.parseFloat(h.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = h.get('retry-after');
  if (!raw) return null;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

/**
 * Remembers that a backend is throttling or down, so a plugin answers `unavailable` at once
 * instead of hammering it. 429 and 5xx honour Retry-After (capped), else back off
 * exponentially; a misconfiguration (401, 403, 404) waits the maximum, since asking again
 * soon cannot help.
 */
export class Backoff {
  private blockedUntil = 0;
  private failures = 0;

  constructor(
    private readonly label: string,
    private readonly options: { baseMs?: number; maxMs?: number; now?: () => number } = {},
  ) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Throws `unavailable` while backing off. */
  check(): void {
    const left = this.blockedUntil - this.now;
    if (left > 0) throw new PluginError('unavailable', `${this.label} is backing off`, Math.ceil(left));
  }

  succeeded(): void {
    this.failures = 0;
    this.blockedUntil = 0;
  }

  /**
   * Turns an error from the backend into the PluginError to answer with, starting a back-off
   * when the error means the backend cannot serve now.
   */
  failed(err: unknown): PluginError {
    const e = err as { status?: unknown; headers?: unknown; message?: unknown };
    const status = typeof e?.status === 'number' ? e.status : null;
    const message = typeof e?.message === 'string' ? e.message : String(err);
    const maxMs = this.options.maxMs ?? 60_000;
    if (status === 400 || status === 413 || status === 415 || status === 422) {
      return new PluginError('bad_request', `${this.label} refused the request (${status}): ${message}`);
    }
    let delay: number;
    if (status === 401 || status === 403 || status === 404) delay = maxMs;
    else {
      this.failures++;
      const hinted = status === 429 || (status !== null && status >= 500) ? retryAfterFromHeaders(e.headers, Date.now()) : null;
      delay = hinted ?? Math.min(maxMs, (this.options.baseMs ?? 1000) * 2 ** (this.failures - 1));
      delay = Math.min(delay, 10 * maxMs);
    }
    this.blockedUntil = this.now + delay;
    const why = status === null ? `unreachable (${message})` : `answered ${status}`;
    return new PluginError('unavailable', `${this.label} ${why}; backing off ${Math.round(delay)} ms`, Math.round(delay));
  }
}

/** An error's message with the root network cause when there is one ("Connection error. (ECONNREFUSED)"). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let detail = '';
  let cause = (err as { cause?: unknown }).cause;
  for (let depth = 0; depth < 4 && cause && typeof cause === 'object'; depth++) {
    const c = cause as { code?: unknown; message?: unknown; cause?: unknown };
    // The deepest cause is the most specific: ECONNREFUSED rather than "fetch failed".
    if (typeof c.code === 'string') detail = c.code;
    else if (typeof c.message === 'string') detail = c.message;
    cause = c.cause;
  }
  return detail && !err.message.includes(detail) ? `${err.message} (${detail})` : err.message;
}
