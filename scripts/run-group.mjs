// Runs several test files in this one process (scripts/file-groups.mjs chose files that may
// share one), for scripts/run-files.mjs, which writes a small entry file per group that calls
// runGroup. Each file is imported inside a suite named by its path, so its tests and its
// top-level hooks (before, after, beforeEach…) belong to that suite alone and every result
// names the file; a file's suite is made only once the previous file's has ended, so files
// load and run one after another, as each would in a process of its own.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { reapedCpuMs } from './file-cpu.mjs';

/** The share of the budget kept back from a file's suite timeout, for its report to leave the process before the runner's cut. */
const MARGIN = 1 / 8;

/**
 * Runs FILES (compiled test files) in suites named by their path under DIST. BUDGET_MS is the
 * runner's per-file timeout, which here cuts the whole group's process: each file's suite times
 * out at what is left of it, so a file that hangs fails by its own name. If the runner's cut
 * comes first (a file hanging in its top-level code), run-files.mjs names the files it left.
 */
export function runGroup(files, dist, budgetMs) {
  // The runner's clock starts when it spawns this process: count from the process's start, not from here (a loaded machine takes seconds to get here).
  const started = Date.now() - process.uptime() * 1000;
  const names = files.map((f) => relative(dist, f).replace(/\.js$/, '.ts'));
  let current = 0;
  // A test may leave nothing for the event loop to wait on (a promise no one resolves): node:test then
  // fails it and ends the process, and files not yet started would not run.
  let drained = false;
  process.once('beforeExit', () => {
    drained = true;
    const notRun = names.slice(current + 1);
    if (current >= files.length || notRun.length === 0) return;
    process.stderr.write(`not run, the event loop emptied during ${names[current]}: ${notRun.join(', ')}\n`);
    // After node:test's own exit handler, which sets the exit status from the results.
    process.on('exit', () => {
      process.exitCode = 1;
    });
  });
  const record = process.env.BRAINSTEM_TEST_CPU;
  const next = (i) => {
    current = i;
    if (i === files.length || drained) return;
    const timeout = Math.max(1, Math.round(budgetMs * (1 - MARGIN) - (Date.now() - started)));
    const before = record ? usage() : null;
    void describe(names[i], { timeout }, () => import(pathToFileURL(files[i]).href)).then(() => {
      if (before) {
        const after = usage();
        appendFileSync(
          record,
          `${process.pid}.${i}\t${after.own - before.own}\t${after.children - before.children}\t${after.wall - before.wall}\t${files[i]}\n`,
        );
      }
      next(i + 1);
    });
  };
  next(0);
}

/** This process's CPU so far, its own and its reaped children's (as scripts/file-cpu.mjs counts them), and the clock, in ms. */
function usage() {
  const own = process.cpuUsage();
  return { own: Math.round((own.user + own.system) / 1000), children: reapedCpuMs(), wall: Date.now() };
}
