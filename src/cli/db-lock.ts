import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../store/files.js';
import { CliError } from './util.js';
import { makeDirSync } from '../store/make-dir.js';

/** The lock file of a database: its path plus this suffix. */
export const LOCK_SUFFIX = '.lock';

export interface DbLock {
  readonly file: string;
  /** Removes the lock file if it is still ours; safe to call more than once. */
  release(): void;
}

/** The commands that take a database's lock: those that run its background jobs. */
export type LockingCommand = 'up' | 'serve';

/**
 * Takes the lock of the one process that runs a SQLite file's background jobs (`brainstem up`,
 * or `serve` unless `--role api`): a file beside it holding the holder's pid and command. Two
 * on one database would each take back the other's renders and deliveries in flight as a
 * dead run's (on SQLite a start does that at once, without waiting for leases), and two
 * stacks would share one sidecar state directory, so a second one refuses to start while
 * the holder lives. A lock left by a process that is gone (killed, crashed) is taken over.
 *
 * The lock is made whole before it appears: its text is written to a private temp file, which
 * is then hard-linked to the lock's name (a link fails when the name exists, atomically).
 */
export function lockDatabase(db: string, command: LockingCommand = 'up', pid: number = process.pid): DbLock {
  const file = db + LOCK_SUFFIX;
  const temp = `${file}.${pid}.tmp`;
  makeDirSync(dirname(file), PRIVATE_DIR_MODE);
  writeFileSync(temp, `${pid} ${command}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(temp, file);
        return { file, release: () => releaseLock(file, pid) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new CliError(`cannot lock ${db}: ${(err as Error).message}`);
      }
      const holder = readHolder(file);
      if (holder !== null && holder.pid !== pid && alive(holder.pid)) {
        throw new CliError(`${db} is in use by another brainstem ${holder.command} (pid ${holder.pid}); stop it, or give this one another --db`);
      }
      // The holder is gone: its lock is stale.
      try {
        unlinkSync(file);
      } catch {
        // removed meanwhile by another starter: try again
      }
    }
    throw new CliError(`cannot lock ${db}: ${file} keeps reappearing`);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // already gone
    }
  }
}

/** The lock's holder; a lock holding only a pid was written by `up` before `serve` took locks too. */
function readHolder(file: string): { pid: number; command: LockingCommand } | null {
  try {
    const [pidText, command] = readFileSync(file, 'utf8').trim().split(' ');
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    return { pid, command: command === 'serve' ? 'serve' : 'up' };
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseLock(file: string, pid: number): void {
  if (readHolder(file)?.pid !== pid) return;
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
