import { readdirSync, readFileSync } from 'node:fs';

// A test file's child processes die with it. The runner ends a file that overruns its per-file
// timeout with SIGTERM, whose default exits at once: the servers and CLIs the file had spawned
// were left running under init, taking CPU from every file after it. Imported for its effect by
// test/helpers/paths.ts, so every file that spawns (they all take `cli` or `repoRoot` from there)
// gets it, under the runner or run alone with `node --test`.
//
// The processes are read from /proc (Linux, where CI runs; elsewhere there is nothing to read
// and nothing is done), so a child made by any spawn, execFile or helper goes, and its own
// children with it. A child in a process group of its own (spawned detached, as the shared
// test services are) ends itself when its parent's pipe closes, and is left alone with its tree.

/** Every process below `root` in `root`'s process group, read from /proc. */
export function descendants(root: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  const groups = new Map<number, number>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // The command name (field 2) may hold spaces and parentheses; state, ppid and pgrp follow its last ')'.
    const [, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(name);
    groups.set(pid, Number(pgrp));
    const siblings = children.get(Number(ppid));
    if (siblings) siblings.push(pid);
    else children.set(Number(ppid), [pid]);
  }
  const group = groups.get(root);
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (groups.get(pid) !== group) continue;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
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
