/**
 * How far a long command is (sim, replay, a benchmark): on a terminal one line rewritten in
 * place (done, rate, time left), elsewhere (a pipe, a CI log) a plain line every few seconds,
 * and nothing at all when the command prints JSON. Written to stderr, so stdout keeps only the
 * command's own output.
 */

/** Least time between two rewrites of the terminal line. */
export const TTY_REDRAW_MS = 100;
/** Time between two plain lines when the output is not a terminal. */
export const PLAIN_EVERY_MS = 5_000;

export interface ProgressOptions {
  /** What is counted, as the line starts: "sim greeting", "replay". */
  label: string;
  /** How many there are in all; null when unknown (no percentage, no time left). */
  total: number | null;
  /** The unit of the rate: "ticks" gives "1200 ticks/s". */
  unit: string;
  /** `--json`: print nothing. */
  json?: boolean;
  /** Default process.stderr. */
  stream?: Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean };
  /** Monotonic clock in ms; default performance.now. */
  now?: () => number;
  /** The line instead of progressLine's (same arguments but the label and unit). */
  format?: (done: number, total: number | null, rate: number, elapsedMs: number, end: boolean) => string;
}

export interface Progress {
  /** `done` so far (absolute, not an increment), and the total when it is learnt only now. Cheap: most calls only compare a time. */
  update(done: number, total?: number): void;
  /** The last line: on a terminal it replaces the updating one and ends it. */
  finish(done?: number): void;
}

const SILENT: Progress = { update: () => {}, finish: () => {} };

export function progress(options: ProgressOptions): Progress {
  if (options.json) return SILENT;
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const now = options.now ?? (() => performance.now());
  const every = tty ? TTY_REDRAW_MS : PLAIN_EVERY_MS;
  // The clock starts at the first update, not at creation: what comes before (a sidecar
  // starting, a file read) is not the work the rate and the time left are about.
  let started = -1;
  /** What was done at the first update: the rate counts what was done after it. */
  let base = 0;
  let next = 0;
  let last = 0;
  let drawn = false;
  let finished = false;
  let total = options.total;
  const draw = (done: number, at: number, end: boolean): void => {
    const elapsed = at - started;
    const rate = elapsed > 0 ? ((done - base) * 1000) / elapsed : 0;
    const text = options.format ? options.format(done, total, rate, elapsed, end) : progressLine(options.label, done, total, options.unit, rate, elapsed, end);
    if (tty) stream.write(`\r\x1b[2K${text}${end ? '\n' : ''}`);
    else stream.write(`${text}\n`);
    drawn = true;
  };
  return {
    update(done, all) {
      last = done;
      if (all !== undefined) total = all;
      if (finished) return;
      const at = now();
      if (started < 0) {
        started = at;
        base = done;
        next = at + every;
        return;
      }
      if (at < next) return;
      next = at + every;
      draw(done, at, false);
    },
    finish(done = last) {
      if (finished) return;
      finished = true;
      // A command over before the first line was due says nothing: it was not long.
      if (!drawn) return;
      draw(done, now(), true);
    },
  };
}

/** "sim greeting: 1,200/5,040 ticks (24%), 410 ticks/s, about 9 s left" (or "…, done in 12 s"); `rate` per second. */
export function progressLine(label: string, done: number, total: number | null, unit: string, rate: number, elapsedMs: number, end = false): string {
  const parts = [`${label}: ${count(done)}${total === null ? '' : `/${count(total)}`} ${unit}`];
  if (total !== null && total > 0) parts[0] += ` (${Math.min(100, Math.floor((done * 100) / total))}%)`;
  parts.push(`${count(Math.round(rate))} ${unit}/s`);
  if (end) parts.push(`done in ${duration(elapsedMs)}`);
  else if (total !== null && rate > 0 && done < total) parts.push(`about ${duration(((total - done) / rate) * 1000)} left`);
  return parts.join(', ');
}

/**
 * The progress of work measured in time (a benchmark's timed runs): the time it has run against
 * the time it is expected to take, when that is known from its flags, kept up by a timer
 * (unref'd: it never holds the process open). Returns the function that ends it.
 */
export function timedProgress(
  label: string,
  expectedS: number | null,
  json: boolean | undefined,
  options: Pick<ProgressOptions, 'stream' | 'now'> & { tickMs?: number } = {},
): () => void {
  const now = options.now ?? (() => performance.now());
  const meter = progress({
    label,
    total: expectedS === null ? null : Math.max(1, Math.round(expectedS)),
    unit: 's',
    ...(json ? { json } : {}),
    ...(options.stream ? { stream: options.stream } : {}),
    now,
    format: (done, total, _rate, elapsedMs, end) => timedLine(label, done, total, elapsedMs, end),
  });
  const start = now();
  const seconds = () => Math.round((now() - start) / 1000);
  meter.update(0);
  const timer = setInterval(() => meter.update(seconds()), options.tickMs ?? 1000);
  timer.unref();
  return () => {
    clearInterval(timer);
    meter.finish(seconds());
  };
}

/** "bench tick: 1 min 05 s of about 4 min 12 s (25%), about 3 min 07 s left", or "bench video: running for 40 s", or "…: done in 4 min 10 s". */
export function timedLine(label: string, doneS: number, totalS: number | null, elapsedMs: number, end: boolean): string {
  if (end) return `${label}: done in ${duration(elapsedMs)}`;
  if (totalS === null) return `${label}: running for ${duration(doneS * 1000)}`;
  if (doneS >= totalS) return `${label}: ${duration(doneS * 1000)}, past the expected ${duration(totalS * 1000)}`;
  return `${label}: ${duration(doneS * 1000)} of about ${duration(totalS * 1000)} (${Math.floor((doneS * 100) / totalS)}%), about ${duration((totalS - doneS) * 1000)} left`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** 9 s, 1 min 20 s, 2 h 05 min. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}
