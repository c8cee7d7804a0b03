import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../store/files.js';
import { CliError } from './util.js';

/** The lock file of a database: its path plus this suffix. */
export const LOCK_SUFFIX = '.lock';

export interface DbLock {
  readonly file: string;
  /** Removes the lock file if it is still ours; safe to call more than once. */
  release(): void;
}

/**
 * Takes the lock of one `brainstem up` on a database file: a file beside it holding the
 * holder's pid. Two stacks on one database would share its sidecar state directory and
 * double every background job, so a second one refuses to start while the holder lives. A
 * lock left by a process that is gone (killed, crashed) is taken over.
 *
 * The lock is made whole before it appears: the pid is written to a private temp file, which
 * is then hard-linked to the lock's name (a link fails when the name exists, atomically).
 */
export function lockDatabase(db: string, pid: number = process.pid): DbLock {
  const file = db + LOCK_SUFFIX;
  const temp = `${file}.${pid}.tmp`;
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  writeFileSync(temp, `${pid}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(temp, file);
        return { file, release: () => releaseLock(file, pid) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new CliError(`cannot lock ${db}: ${(err as Error).message}`);
      }
      const holder = readHolder(file);
      if (holder !== null && holder !== pid && alive(holder)) {
        throw new CliError(`${db} is in use by another brainstem up (pid ${holder}); stop it, or give this one another --db`);
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

function readHolder(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
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
  if (readHolder(file) !== pid) return;
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
