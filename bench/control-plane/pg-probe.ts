import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type pg from 'pg';

/**
 * Loaded with `--import` into a `serve` process the replica benchmarks start (never into a
 * server of yours): counts the statements the process sends to PostgreSQL (every
 * `Client.query`, pooled or not) and the notifications it receives (LISTEN/NOTIFY). On
 * SIGUSR2 it writes the counts, synchronously, to `<BRAINSTEM_BENCH_PROBE_DIR>/<pid>.json`,
 * so the benchmark reads them exactly at a scenario's start and end. The cost in the process
 * is one counter increment per statement.
 */
export interface ProbeCounts {
  statements: number;
  notifications: number;
  /** Statements by name (prepared) or first words of their text. */
  byStatement: Record<string, number>;
}

const dir = process.env.BRAINSTEM_BENCH_PROBE_DIR;
if (dir) {
  // The same module instance the server imports: node-postgres is CommonJS, cached by path.
  const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
  const counts: ProbeCounts = { statements: 0, notifications: 0, byStatement: {} };
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    counts.statements++;
    const first = args[0] as string | { name?: string; text?: string } | undefined;
    const key = (typeof first === 'string' ? first : (first?.name ?? first?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 48);
    counts.byStatement[key] = (counts.byStatement[key] ?? 0) + 1;
    return query.apply(this, args);
  } as typeof Client.prototype.query;
  const emit = Client.prototype.emit;
  Client.prototype.emit = function (this: pg.Client, event: string | symbol, ...args: unknown[]) {
    if (event === 'notification') counts.notifications++;
    return emit.call(this, event, ...args);
  };
  process.on('SIGUSR2', () => writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(counts)));
}
