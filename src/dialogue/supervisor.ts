import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  LineSplitter,
  encodeMessage,
  parseChildMessage,
  type ChildMessage,
  type MethodName,
  type ParamsOf,
  type PluginErrorCode,
  type ResultOf,
} from '../../plugins/protocol.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';

/** A failed plugin request, with the protocol's code (the supervisor adds timeout, crashed, queue_full, closed). */
export class PluginRequestError extends Error {
  constructor(
    readonly code: PluginErrorCode,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'PluginRequestError';
  }
}

export type PluginName = 'dialogue' | 'voice-out' | 'voice-in';

/** Where the compiled plugin lives: dist/plugins/<name>.js beside dist/src/. */
export function pluginScript(name: string): string {
  return fileURLToPath(new URL(`../../plugins/${name}.js`, import.meta.url));
}

export interface SupervisorOptions {
  name: string;
  /** Script to run with process.execPath; default dist/plugins/<name>.js. */
  script?: string;
  /** Environment of the child; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** A request with no answer after this is rejected with `timeout`. Default 15 s. */
  requestTimeoutMs?: number;
  /**
   * A timed-out request still unanswered this long after its timeout means the child is
   * stuck: it is killed and restarted. Default: one more requestTimeoutMs.
   */
  hungKillMs?: number;
  /** Requests sent to the child at once; more wait in the queue. Default 4. */
  concurrency?: number;
  /** Requests allowed to wait; beyond it a request fails at once with `queue_full`. Default 32. */
  maxQueue?: number;
  /** Time allowed from spawn to the hello message. Default 10 s. */
  startTimeoutMs?: number;
  /** Restart back-off after a crash: starts here, doubles, capped at maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A child that stays up this long resets the back-off. Default 30 s. */
  stableAfterMs?: number;
  logger?: Logger;
  now?: () => number;
}

interface Pending {
  id: number;
  method: MethodName;
  params: unknown;
  timeoutMs: number;
  resolve(value: unknown): void;
  reject(err: PluginRequestError): void;
  timer: NodeJS.Timeout | null;
}

type State =
  | { kind: 'idle' }
  | { kind: 'starting'; child: ChildProcess; startedAt: number; timer: NodeJS.Timeout }
  | { kind: 'ready'; child: ChildProcess; startedAt: number }
  | { kind: 'backoff'; until: number; timer: NodeJS.Timeout }
  | { kind: 'closed' };

/**
 * Runs one plugin child process on demand and talks to it over the NDJSON protocol.
 *
 * What the caller gets back is only ever a plain value parsed from JSON (or a
 * PluginRequestError): nothing of the child, its streams or its timers leaks out, so the
 * tick path can hold results without holding the plugin.
 */
export class PluginSupervisor {
  readonly name: string;
  private readonly script: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly requestTimeoutMs: number;
  private readonly hungKillMs: number;
  private readonly concurrency: number;
  private readonly maxQueue: number;
  private readonly startTimeoutMs: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly stableAfterMs: number;
  private readonly logger: Logger;
  private readonly now: () => number;

  private state: State = { kind: 'idle' };
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<number, Pending>();
  /** Timed-out requests still owed by the child, by id, with the time it must answer by. */
  private readonly overdue = new Map<number, number>();
  private hungTimer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private failures = 0;
  private restarts = 0;
  private closeWaiters: Array<() => void> = [];

  constructor(options: SupervisorOptions) {
    this.name = options.name;
    this.script = options.script ?? pluginScript(options.name);
    this.env = options.env ?? process.env;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
    this.hungKillMs = options.hungKillMs ?? this.requestTimeoutMs;
    this.concurrency = options.concurrency ?? 4;
    this.maxQueue = options.maxQueue ?? 32;
    this.startTimeoutMs = options.startTimeoutMs ?? 10_000;
    this.backoffMs = options.backoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.stableAfterMs = options.stableAfterMs ?? 30_000;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    for (const [key, value] of Object.entries({ requestTimeoutMs: this.requestTimeoutMs, concurrency: this.concurrency, backoffMs: this.backoffMs })) {
      if (!Number.isFinite(value) || value <= 0) throw new Error(`PluginSupervisor option ${key} must be a positive number, got ${value}`);
    }
  }

  /** The child's pid while it runs (tests kill it to prove restarts). */
  get pid(): number | null {
    return this.state.kind === 'starting' || this.state.kind === 'ready' ? (this.state.child.pid ?? null) : null;
  }

  get status(): { state: State['kind']; queued: number; inFlight: number; restarts: number; backoffUntil: number | null } {
    return {
      state: this.state.kind,
      queued: this.queue.length,
      inFlight: this.inFlight.size,
      restarts: this.restarts,
      backoffUntil: this.state.kind === 'backoff' ? this.state.until : null,
    };
  }

  /**
   * Sends one request; starts the child if it is not running. Rejects at once with
   * `queue_full` when the queue is full, `unavailable` while a crashed child waits out its
   * back-off, `closed` after close().
   */
  request<M extends MethodName>(method: M, params: ParamsOf<M>, options: { timeoutMs?: number } = {}): Promise<ResultOf<M>> {
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const s = this.state;
      if (s.kind === 'closed') return reject(new PluginRequestError('closed', `${this.name} plugin is closed`));
      if (s.kind === 'backoff') {
        return reject(new PluginRequestError('unavailable', `${this.name} plugin is restarting after a crash`, Math.max(0, s.until - this.now())));
      }
      if (this.queue.length >= this.maxQueue) return reject(new PluginRequestError('queue_full', `${this.name} plugin queue is full (${this.maxQueue})`));
      const pending: Pending = {
        id: this.nextId++,
        method,
        params,
        timeoutMs: options.timeoutMs ?? this.requestTimeoutMs,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer: null,
      };
      this.queue.push(pending);
      if (s.kind === 'idle') this.start();
      else this.pump();
    });
  }

  /** Asks the child to finish, then kills it if it has not exited after graceMs. */
  async close(graceMs = 2000): Promise<void> {
    const s = this.state;
    this.state = { kind: 'closed' };
    this.failAll('closed', `${this.name} plugin was closed`);
    if (this.hungTimer) clearTimeout(this.hungTimer);
    if (s.kind === 'backoff') clearTimeout(s.timer);
    if (s.kind !== 'starting' && s.kind !== 'ready') return;
    if (s.kind === 'starting') clearTimeout(s.timer);
    const child = s.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.closeWaiters.push(resolve));
    try {
      child.stdin?.write(encodeMessage({ type: 'shutdown' }));
      child.stdin?.end();
    } catch {
      // the pipe may already be gone; the kill below covers it
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  private start(): void {
    const child = spawn(process.execPath, [this.script], { stdio: ['pipe', 'pipe', 'pipe'], env: this.env });
    const startedAt = this.now();
    const timer = setTimeout(() => {
      this.logger.warn('plugin did not say hello in time; killing it', { plugin: this.name, ms: this.startTimeoutMs });
      child.kill('SIGKILL');
    }, this.startTimeoutMs);
    this.state = { kind: 'starting', child, startedAt, timer };
    child.stdout!.setEncoding('utf8');
    const splitter = new LineSplitter((line) => this.onLine(child, line));
    child.stdout!.on('data', (chunk: string) => splitter.push(chunk));
    let stderrTail = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-2000);
    });
    // A write to a dead child's stdin errors asynchronously; the exit handler does the cleanup.
    child.stdin!.on('error', () => {});
    child.on('error', (err) => this.logger.error('plugin process error', { plugin: this.name, error: err.message }));
    child.on('exit', (code, signal) => this.onExit(child, code, signal, stderrTail));
  }

  private onLine(child: ChildProcess, line: string): void {
    const msg = parseChildMessage(line);
    if (!msg) {
      this.logger.warn('plugin wrote a malformed line', { plugin: this.name, line: line.slice(0, 200) });
      return;
    }
    this.onMessage(child, msg);
  }

  private onMessage(child: ChildProcess, msg: ChildMessage): void {
    const s = this.state;
    switch (msg.type) {
      case 'hello':
        if (s.kind === 'starting' && s.child === child) {
          clearTimeout(s.timer);
          this.state = { kind: 'ready', child, startedAt: s.startedAt };
          this.pump();
        }
        return;
      case 'log':
        this.logger[msg.level === 'error' ? 'error' : msg.level === 'warn' ? 'warn' : 'info'](msg.message, { plugin: this.name, ...msg.fields });
        return;
      case 'response':
      case 'error': {
        if (this.overdue.delete(msg.id)) return;
        const p = this.inFlight.get(msg.id);
        if (!p) return;
        this.inFlight.delete(msg.id);
        if (p.timer) clearTimeout(p.timer);
        if (msg.type === 'response') p.resolve(msg.result);
        else p.reject(new PluginRequestError(msg.code, msg.message, msg.retry_after_ms));
        if (s.kind === 'ready' && this.now() - s.startedAt >= this.stableAfterMs) this.failures = 0;
        this.pump();
        return;
      }
    }
  }

  private pump(): void {
    const s = this.state;
    if (s.kind !== 'ready') return;
    while (this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const p = this.queue.shift()!;
      this.inFlight.set(p.id, p);
      p.timer = setTimeout(() => this.onTimeout(p), p.timeoutMs);
      s.child.stdin!.write(encodeMessage({ type: 'request', id: p.id, method: p.method, params: p.params }));
    }
  }

  private onTimeout(p: Pending): void {
    if (!this.inFlight.delete(p.id)) return;
    p.reject(new PluginRequestError('timeout', `${this.name} plugin did not answer ${p.method} within ${p.timeoutMs} ms`));
    this.overdue.set(p.id, this.now() + this.hungKillMs);
    this.armHungCheck();
    this.pump();
  }

  /** One timer watches the oldest overdue request; if it is still owed at its deadline the child is stuck. */
  private armHungCheck(): void {
    if (this.hungTimer || this.overdue.size === 0) return;
    let first = Infinity;
    for (const deadline of this.overdue.values()) first = Math.min(first, deadline);
    this.hungTimer = setTimeout(
      () => {
        this.hungTimer = null;
        const s = this.state;
        const now = this.now();
        let stuck = false;
        for (const deadline of this.overdue.values()) if (deadline <= now) stuck = true;
        if (stuck && (s.kind === 'ready' || s.kind === 'starting')) {
          this.logger.warn('plugin is hung; killing it', { plugin: this.name, overdue: this.overdue.size });
          s.child.kill('SIGKILL');
          return;
        }
        this.armHungCheck();
      },
      Math.max(1, first - this.now()),
    );
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, stderrTail: string): void {
    const s = this.state;
    if (s.kind === 'closed') {
      const waiters = this.closeWaiters;
      this.closeWaiters = [];
      for (const w of waiters) w();
      return;
    }
    if ((s.kind !== 'starting' && s.kind !== 'ready') || s.child !== child) return;
    if (s.kind === 'starting') clearTimeout(s.timer);
    this.overdue.clear();
    if (this.hungTimer) {
      clearTimeout(this.hungTimer);
      this.hungTimer = null;
    }
    const uptime = this.now() - s.startedAt;
    if (uptime >= this.stableAfterMs) this.failures = 0;
    this.failures++;
    const delay = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** (this.failures - 1));
    this.logger.warn('plugin exited; restarting after back-off', { plugin: this.name, code, signal, delayMs: delay, stderr: stderrTail.trim().slice(-500) });
    const reason =
      s.kind === 'starting'
        ? `${this.name} plugin failed to start (${signal ?? `exit ${code}`})${stderrTail ? `: ${lastLine(stderrTail)}` : ''}`
        : `${this.name} plugin exited (${signal ?? `exit ${code}`})`;
    for (const p of this.inFlight.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new PluginRequestError('crashed', reason, delay));
    }
    this.inFlight.clear();
    // Queued requests never reached the child: they fail now rather than wait out the back-off.
    this.failAll('unavailable', reason, delay);
    const timer = setTimeout(() => {
      if (this.state.kind !== 'backoff') return;
      this.restarts++;
      this.start();
    }, delay);
    this.state = { kind: 'backoff', until: this.now() + delay, timer };
  }

  private failAll(code: PluginErrorCode, message: string, retryAfterMs?: number): void {
    for (const p of this.queue.splice(0)) p.reject(new PluginRequestError(code, message, retryAfterMs));
    for (const p of this.inFlight.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new PluginRequestError(code, message, retryAfterMs));
    }
    this.inFlight.clear();
  }
}

/** The line of a crash's stderr that says what went wrong: the first "…Error: …" line, else the last one. */
function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('Node.js v'));
  const error = lines.find((l) => /^\w*Error\b.*:/.test(l.trim()));
  return (error ?? lines[lines.length - 1] ?? '').trim().slice(0, 300);
}
