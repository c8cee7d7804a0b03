import { readdirSync, readFileSync } from 'node:fs';

// A test file's child processes die with it. The runner ends a file that overruns its per-file
// timeout with SIGTERM, whose default exits at once: the servers and CLIs the file had spawned
// were left running under init, taking CPU from every file after it. Imported for its effect by
// test/helpers/paths.ts, so every file that spawns (they all take `cli` or `repoRoot` from there)
// gets it, under the runner or run alone with `node --test`.
//
// The processes are read from /proc/PID/task/TID/children (Linux, where CI runs; elsewhere
// there is nothing to read and nothing is done): a child made by any spawn, execFile or helper
// goes, and its own children with it, and a file that spawned nothing pays a few small reads at
// exit. A child in a process group of its own (spawned detached, as the shared test services
// are) ends itself when its parent's pipe closes, and is left alone with its tree.

/** The children of `pid`, as the kernel lists them per thread (none when it cannot be read). */
function childrenOf(pid: number): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const tid of threads) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (child !== '') found.push(Number(child));
    } catch {
      // the thread ended since the listing
    }
  }
  return found;
}

/** The process group of `pid`, or null when it is gone. */
function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; state, ppid and pgrp follow its last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/** Every process below `root` in `root`'s process group. */
function descendants(root: number): number[] {
  const group = groupOf(root);
  const found: number[] = [];
  const queue = childrenOf(root);
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (groupOf(pid) !== group) continue;
    found.push(pid);
    queue.push(...childrenOf(pid));
  }
  return found;
}

/** SIGKILLs every descendant of this process in its group; all are listed before any is killed, so none escapes by being reparented. */
function killDescendants(): void {
  for (const pid of descendants(process.pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

process.on('exit', killDescendants);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killDescendants();
    // With this listener gone the signal's default action is back: the file ends as it would have.
    process.kill(process.pid, signal);
  });
}
