// Runs test files with node:test's run(), in the order given, for run-tests.mjs: `node --test`
// (Node 20) sorts its file arguments by name, which put the slowest suites (video/, webhooks/)
// last whatever order the runner chose.
//
//   node scripts/run-files.mjs CONCURRENCY TIMEOUT_MS TIMINGS FILE...
//
// TIMINGS is a file that gets one line per top-level test (its duration in ms and its file,
// tab-separated), or - for none. The report is the spec reporter's on a terminal or with
// timings, else TAP, as `node --test` prints.
import { appendFileSync } from 'node:fs';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';

const [concurrency, timeout, timings, ...files] = process.argv.slice(2);
const stream = run({ files, concurrency: Number(concurrency), timeout: Number(timeout) });
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
if (timings !== '-') {
  for (const type of ['test:pass', 'test:fail']) {
    stream.on(type, (data) => {
      if (data.nesting === 0 && data.file) appendFileSync(timings, `${data.details.duration_ms}\t${data.file}\n`);
    });
  }
}
stream.compose(timings !== '-' || process.stdout.isTTY ? new spec() : tap).pipe(process.stdout);
