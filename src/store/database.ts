import { resolve } from 'node:path';
import { BackgroundCheckpoints } from './checkpointer.js';
import { openDatabase, type Db } from './sqlite.js';
import { openPool, type Pool, type PoolOptions } from './postgres.js';

/** Where every service keeps its data: one SQLite file, or one PostgreSQL database. */
export type DatabaseLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** The database of a command given neither `--database`, `--db` nor DATABASE_URL. */
export const DEFAULT_DATABASE = 'sqlite:./brainstem.db';

/**
 * Reads a database URL: `sqlite:PATH` (also `sqlite://PATH`; a relative PATH is resolved
 * against the working directory) or `postgres://…` / `postgresql://…` as libpq takes it.
 * Anything else is refused with the forms that are understood.
 */
export function parseDatabaseUrl(raw: string): DatabaseLocation {
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Error(`the database URL "${redact(value)}" is not a valid URL`);
    }
    if (url.pathname.length <= 1 && !url.searchParams.has('dbname'))
      throw new Error(`the database URL "${redact(value)}" names no database (postgres://USER:PASSWORD@HOST:PORT/DATABASE)`);
    return { kind: 'postgres', url: value };
  }
  const sqlite = /^sqlite:(?:\/\/)?(.*)$/i.exec(value);
  if (sqlite) {
    const path = sqlite[1]!;
    if (path === '') throw new Error('a sqlite: database URL needs a file path, e.g. sqlite:./brainstem.db');
    return { kind: 'sqlite', file: path === ':memory:' ? path : resolve(path) };
  }
  throw new Error(`the database must be sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE, got "${redact(value)}"`);
}

/**
 * The database a command uses: `--database URL`, else `--db FILE` (the SQLite form kept
 * from before URLs), else DATABASE_URL, else DEFAULT_DATABASE. Both flags at once is an error.
 */
export function chooseDatabase(flags: { database?: string | undefined; db?: string | undefined }, env: NodeJS.ProcessEnv = process.env): DatabaseLocation {
  if (flags.database !== undefined && flags.db !== undefined) throw new Error('give --database URL or --db FILE, not both');
  if (flags.database !== undefined) return parseDatabaseUrl(flags.database);
  if (flags.db !== undefined) {
    if (flags.db.trim() === '') throw new Error('--db needs a file path');
    return { kind: 'sqlite', file: resolve(flags.db) };
  }
  const fromEnv = env.DATABASE_URL;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseDatabaseUrl(fromEnv);
  return parseDatabaseUrl(DEFAULT_DATABASE);
}

/** The URL with its password replaced, for logs and messages. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

/** A location as a log line shows it (a PostgreSQL password never appears). */
export function describeDatabase(location: DatabaseLocation): string {
  return location.kind === 'sqlite' ? `sqlite:${location.file}` : redact(location.url);
}

/** An open database: the SQLite handle or the PostgreSQL pool the stores are built on. */
export type Database = ({ kind: 'sqlite'; db: Db } | { kind: 'postgres'; pool: Pool; url: string }) & {
  readonly location: DatabaseLocation;
  close(): Promise<void>;
};

export interface OpenOptions extends PoolOptions {
  /** Told when SQLite's background checkpoint thread fails (the writer then checkpoints by itself). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

export function openDatabaseAt(location: DatabaseLocation, pool: OpenOptions = {}): Database {
  if (location.kind === 'sqlite') {
    const db = openDatabase(location.file);
    // A busy file's WAL is copied into the database by a thread of its own, not inside a commit.
    const checkpoints = location.file === ':memory:' ? null : new BackgroundCheckpoints(db, location.file, pool.warn);
    return {
      kind: 'sqlite',
      db,
      location,
      close: async () => {
        await checkpoints?.stop();
        db.close();
      },
    };
  }
  const p = openPool(location.url, pool);
  return { kind: 'postgres', pool: p, url: location.url, location, close: () => p.end() };
}
