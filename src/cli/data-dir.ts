import { accessSync, constants } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { PRIVATE_DIR_MODE } from '../store/files.js';
import type { DatabaseLocation } from '../store/database.js';
import { CliError, databaseFlag } from './util.js';
import { makeDirSync } from '../store/make-dir.js';

/** The environment variable naming the data directory (as --data-dir does). */
export const DATA_DIR_ENV = 'BRAINSTEM_DATA_DIR';

/** The SQLite file a data directory holds when no database is named. */
export const DATA_DIR_DATABASE = 'brainstem.db';
/** The property-video files (photos, videos, posters) under a data directory, unless --data says otherwise. */
export const DATA_DIR_VIDEO = 'data';

export function withDataDirOption(command: Command, what: string): Command {
  return command.option('--data-dir <dir>', `${what} (env ${DATA_DIR_ENV})`);
}

/** --data-dir, else BRAINSTEM_DATA_DIR, resolved; undefined when neither is set. */
export function givenDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag !== undefined) {
    if (flag.trim() === '') throw new CliError('--data-dir needs a directory');
    return resolve(flag);
  }
  const fromEnv = env[DATA_DIR_ENV];
  return fromEnv !== undefined && fromEnv.trim() !== '' ? resolve(fromEnv) : undefined;
}

/**
 * The data directory of `serve` and `up` and the database in it. Given (--data-dir or the
 * environment), the database defaults to brainstem.db in it; otherwise the data directory is
 * the SQLite file's own directory (the working directory for the default ./brainstem.db), or
 * the working directory with PostgreSQL. Everything the stack writes (database, property-video
 * files, the sidecar's state) goes there and nowhere else. Created 0700 when missing.
 */
export function stackDataDir(
  flags: { dataDir?: string | undefined; database?: string | undefined; db?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): { dir: string; database: DatabaseLocation } {
  const given = givenDataDir(flags.dataDir, env);
  const database = stackDatabase(flags, env);
  const dir = given ?? (database.kind === 'sqlite' ? dirname(database.file) : process.cwd());
  ensureDataDir(dir);
  return { dir, database };
}

/** The database of a stack: the one --database, --db or DATABASE_URL names, else brainstem.db in a given data directory, else ./brainstem.db. */
export function stackDatabase(
  flags: { dataDir?: string | undefined; database?: string | undefined; db?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): DatabaseLocation {
  const given = givenDataDir(flags.dataDir, env);
  const named = flags.database !== undefined || flags.db !== undefined || (env.DATABASE_URL ?? '').trim() !== '';
  return given !== undefined && !named ? { kind: 'sqlite', file: join(given, DATA_DIR_DATABASE) } : databaseFlag(flags, env);
}

/** The sidecar's data directory: --data-dir, else BRAINSTEM_DATA_DIR, else the working directory. */
export function sidecarDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const given = givenDataDir(flag, env);
  if (given !== undefined) ensureDataDir(given);
  return given ?? cwd;
}

/**
 * Creates a data directory (0700) when missing and checks that this process can write in it,
 * so that a directory it cannot use stops the start with one line, rather than every later
 * write (the database, a render, the brains' memory) failing on its own.
 */
export function ensureDataDir(dir: string): void {
  try {
    makeDirSync(dir, PRIVATE_DIR_MODE);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // mkdir -p answers EEXIST (or ENOTDIR) when a file stands where a directory of the path should be.
    // EEXIST also when a link to nothing (a disk not mounted) stands there; a last ENOENT, its
    // parents all there, when one of them holds no directories (/proc, /sys).
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? `a file (or a link to nothing) is in the way (${code})`
        : code === 'ENOENT'
          ? 'a directory above it cannot hold one (/proc or /sys?) (ENOENT)'
          : (code ?? (err as Error).message);
    throw new CliError(`cannot create the data directory ${dir}: ${why}`);
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new CliError(`the data directory ${dir} is not writable by this process (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
