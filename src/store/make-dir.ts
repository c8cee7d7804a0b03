import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * `mkdir -p` that always ends. Node's own (`mkdir(dir, { recursive: true })`, Node 20 and 22)
 * never returns when a parent exists but cannot hold the child: under `/proc` or `/sys`, or
 * behind a dangling symbolic link (a data directory on a disk that is not mounted), mkdir
 * answers ENOENT, Node makes the parent (EEXIST), tries the child again, and spins at 100 %
 * CPU forever, so a mistyped `--data-dir` hung the command with no output. Here each missing
 * ancestor is made once, and a second ENOENT for the same directory is the answer. Every
 * directory made gets `mode`; one already there (or made meanwhile by another process) is kept.
 */
export function makeDirSync(dir: string, mode: number): void {
  if (tryMakeSync(dir, mode)) return;
  const parent = dirname(dir);
  if (parent !== dir) makeDirSync(parent, mode);
  if (!tryMakeSync(dir, mode)) mkdirSync(dir, { mode });
}

/** makeDirSync without blocking the event loop. */
export async function makeDir(dir: string, mode: number): Promise<void> {
  if (await tryMake(dir, mode)) return;
  const parent = dirname(dir);
  if (parent !== dir) await makeDir(parent, mode);
  if (!(await tryMake(dir, mode))) await mkdir(dir, { mode });
}

/** True when `dir` is a directory now; false when a parent is missing (ENOENT); any other failure is thrown as it is. */
function tryMakeSync(dir: string, mode: number): boolean {
  try {
    mkdirSync(dir, { mode });
    return true;
  } catch (err) {
    let directory = false;
    try {
      directory = statSync(dir).isDirectory();
    } catch {
      // Not there, or a dangling link: no directory.
    }
    return verdict(err, directory);
  }
}

async function tryMake(dir: string, mode: number): Promise<boolean> {
  try {
    await mkdir(dir, { mode });
    return true;
  } catch (err) {
    return verdict(err, (await stat(dir).catch(() => null))?.isDirectory() === true);
  }
}

/** A failed mkdir: EEXIST of a directory is success, ENOENT a missing parent, anything else (a file in the way, EACCES, EROFS) the error. */
function verdict(err: unknown, isDirectory: boolean): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EEXIST' && isDirectory) return true;
  if (code === 'ENOENT') return false;
  throw err;
}
