// Runs test files with node:test's run(), in the order given, for run-tests.mjs: `node --test`
// (Node 20) sorts its file arguments by name, which put the slowest suites (video/, webhooks/)
// last whatever order the runner chose.
//
//   node scripts/run-files.mjs CONCURRENCY TIMEOUT_MS TIMINGS ENTRY...
//
// An ENTRY is a test file, or `group:` and several test files joined by `:` that run in one
// process (scripts/run-group.mjs), each in a suite named by its path under dist/. TIMINGS is a
// file that gets one line per top-level test, or per grouped file (its duration in ms and its
// file, tab-separated), or - for none. The report is the spec reporter's on a terminal or with
// timings, else TAP, as `node --test` prints.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const runGroup = fileURLToPath(new URL('run-group.mjs', import.meta.url));
const [concurrency, timeout, timings, ...entries] = process.argv.slice(2);
let groupDir = null;
/** Each group's entry file, with the names of its files (as their suites are named). */
const groups = new Map();
const files = entries.map((entry) => {
  if (!entry.startsWith('group:')) return entry;
  groupDir ??= mkdtempSync(join(tmpdir(), 'brainstem-groups-'));
  const members = entry.slice('group:'.length).split(':');
  const file = join(groupDir, `group-${groups.size + 1}.test.mjs`);
  writeFileSync(
    file,
    `import { runGroup } from ${JSON.stringify(pathToFileURL(runGroup).href)};\n` +
      `runGroup(${JSON.stringify(members)}, ${JSON.stringify(dist)}, ${Number(timeout)});\n`,
  );
  groups.set(
    file,
    members.map((m) => relative(dist, m).replace(/\.js$/, '.ts')),
  );
  return file;
});
if (groupDir) process.on('exit', () => rmSync(groupDir, { recursive: true, force: true }));

const stream = run({ files, concurrency: Number(concurrency), timeout: Number(timeout) });
const reported = new Set();
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
  // A group's process failed as a whole (cut by the timeout, or it failed to start): name the files it left.
  const names = data.nesting === 0 ? groups.get(data.file) : undefined;
  const left = names?.filter((name) => !reported.has(name)) ?? [];
  if (left.length > 0) console.error(`${data.file} ended during ${left[0]}${left.length > 1 ? `; not run: ${left.slice(1).join(', ')}` : ''}`);
});
for (const type of ['test:pass', 'test:fail']) {
  stream.on(type, (data) => {
    if (data.nesting === 0 && data.file === runGroup) reported.add(data.name);
  });
}
if (timings !== '-') {
  for (const type of ['test:pass', 'test:fail']) {
    stream.on(type, (data) => {
      if (data.nesting !== 0 || !data.file) return;
      // A group's top-level suites are its files (made in run-group.mjs), named by their path under dist/ as sources.
      const file = data.file === runGroup ? join(dist, data.name.replace(/\.ts$/, '.js')) : data.file;
      appendFileSync(timings, `${data.details.duration_ms}\t${file}\n`);
    });
  }
}
stream.compose(timings !== '-' || process.stdout.isTTY ? new spec() : tap).pipe(process.stdout);
