// Runs the test suite with node's test runner (Node 20 has no glob arguments for --test, so
// the files are listed by scripts/test-files.mjs, from the sources).
//
//   node scripts/run-tests.mjs [--unit | --fast] [--timings] [--cpu] [--alone] [NAME...]
//
// NAME keeps only the files whose path contains it. --unit runs only the suites of pure
// modules (UNIT_SUITES, `npm run test:unit`, well under a minute); --fast leaves out the
// slowest suites (SLOW_SUITES, `npm run test:fast`), for day-to-day work; CI runs everything.
// --timings also prints each file's test time, slowest first, to choose SLOW_SUITES by. --cpu
// prints each file's CPU, the most first: its own process's, its reaped children's (the servers,
// CLIs and ffmpeg it spawned) and its PostgreSQL backends' on the shared server (sampled, so a
// lower bound), then the shared services' and the whole run's. --alone gives every file a
// process of its own (by default the files that may share one run up to GROUP_SIZE to a process,
// scripts/file-groups.mjs), to tell whether a failure comes from sharing.
//
// The files run FILE_CONCURRENCY at a time, the slowest first (SLOW_SUITES' order) so that no
// long file starts last. Those scripts/file-groups.mjs finds may share a process (no processes, PostgreSQL, browser, environment, process handlers or
// globals) run up to GROUP_SIZE to a process, each in a suite named by its file. They share one PostgreSQL server and one Chromium, started on first
// use by scripts/test-services.mjs and stopped (their temp dirs removed) however the run ends;
// the dashboard's page code is compiled once here rather than by each browser test.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildIsCurrent } from './build.mjs';
import { groupFiles } from './file-groups.mjs';
import { selectTests } from './test-files.mjs';

/**
 * Test files run at once. The suite is mostly CPU work (servers, PostgreSQL, ffmpeg, Chromium
 * and child processes started by the tests), so more files at once than cores only helps
 * while some of them wait; bench/RESULTS.md ("Suite time") has the measurements behind it.
 */
const FILE_CONCURRENCY = 3;

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flags = new Set(['--fast', '--unit', '--timings', '--cpu', '--alone']);
const filter = args.filter((a) => !flags.has(a));
const unknown = filter.filter((a) => a.startsWith('--'));
if (unknown.length > 0) {
  console.error(`unknown option ${unknown[0]}; the options are --unit, --fast, --timings, --cpu and --alone`);
  process.exit(1);
}
const compiled = selectTests(root, { fast: args.includes('--fast'), unit: args.includes('--unit'), filter, slowestFirst: true });
if (compiled.length === 0) {
  console.error(`no test files under test/ match ${filter.join(' ')}`);
  process.exit(1);
}
const missing = compiled.filter((f) => !existsSync(f));
if (missing.length > 0) {
  console.error(`not built: ${missing.map((f) => relative(root, f)).join(', ')}; run npm run build first`);
  process.exit(1);
}

const env = { ...process.env, BRAINSTEM_LOG: process.env.BRAINSTEM_LOG ?? 'silent' };
const cpuDir = args.includes('--cpu') ? mkdtempSync(join(tmpdir(), 'brainstem-cpu-')) : null;
if (cpuDir) env.BRAINSTEM_TEST_CPU = join(cpuDir, 'cpu.tsv');

// A browser test serves the compiled dashboard; compiled once here, each file need not (test/helpers/browser.ts),
// and not at all when dist/ is the build of the sources as they are (`npm test` has just built them).
if (compiled.some((f) => readFileSync(f, 'utf8').includes('/helpers/browser.js'))) {
  const r = buildIsCurrent(root) ? { status: 0 } : spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'dashboard')], { encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(`tsc -p dashboard failed:\n${r.stdout}${r.stderr}`);
    process.exit(1);
  }
  env.BRAINSTEM_TEST_DASHBOARD_BUILT = '1';
}

// Its own process group (detached), so a Ctrl-C reaches the tests and this runner but not the
// shared servers: they are stopped once the tests have ended, when this process closes the pipe.
const services = spawn(process.execPath, [join(root, 'scripts', 'test-services.mjs')], { stdio: ['pipe', 'pipe', 'inherit'], detached: true, env });
const servicesExited = new Promise((resolve) => services.once('exit', resolve));
const servicesUrl = await new Promise((resolve) => {
  createInterface({ input: services.stdout }).once('line', resolve);
  services.once('exit', () => resolve(null));
});
if (servicesUrl) env.BRAINSTEM_TEST_SERVICES = servicesUrl;
else console.error('scripts/test-services.mjs did not start: each test file starts its own PostgreSQL and Chromium');

const timings = args.includes('--timings') ? mkdtempSync(join(tmpdir(), 'brainstem-timings-')) : null;
// Not `node --test`: Node 20 sorts its files by name, and the order is SLOW_SUITES' (scripts/run-files.mjs).
/**
 * A file is cut after this long: it only catches a file that hangs. The slowest files take 30–60 s
 * alone but over two minutes on a slower or busier 2-core machine, where 120 s cut files that
 * would have passed.
 */
const FILE_TIMEOUT_MS = 240_000;
const runFiles = [join(root, 'scripts', 'run-files.mjs'), String(FILE_CONCURRENCY), String(FILE_TIMEOUT_MS), timings ? join(timings, 'times.tsv') : '-'];
// node:test's run() starts each file with this process's exec arguments: the CPU record's preload goes there.
const preload = cpuDir ? [`--import=${pathToFileURL(join(root, 'scripts', 'file-cpu.mjs')).href}`] : [];
// Files that may share a process run several to one (scripts/file-groups.mjs), saving node's start and the
// loading of the modules they share: about a fifth of a whole run's CPU (bench/RESULTS.md, "processes per file").
const entries = !args.includes('--alone') ? groupFiles(root, compiled).map((e) => (Array.isArray(e) ? `group:${e.join(':')}` : e)) : compiled;
const tests = spawn(process.execPath, [...preload, ...runFiles, ...entries], { stdio: 'inherit', env });
// A Ctrl-C reaches the tests from the terminal too; a signal sent to this process alone is passed on.
// Either way this process waits for the tests to end, then stops the shared servers.
let signalled = null;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    signalled ??= sig;
    tests.kill(sig);
  });
}
const status = await new Promise((resolve) => tests.once('exit', (code, sig) => resolve(code ?? (sig ? 1 : 0))));
services.stdin.end();
await servicesExited;

if (timings) {
  const perFile = new Map();
  for (const line of readFileSync(join(timings, 'times.tsv'), 'utf8').split('\n')) {
    const [ms, file] = line.split('\t');
    if (file) perFile.set(file, (perFile.get(file) ?? 0) + Number(ms));
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((a, [, ms]) => a + ms, 0);
  console.log(`\ntest time per file, slowest first (total ${(total / 1000).toFixed(1)} s):`);
  for (const [file, ms] of rows) console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(join(root, 'dist'), file).replace(/\.js$/, '.ts')}`);
  rmSync(timings, { recursive: true, force: true });
}
if (cpuDir) {
  printCpu(readFileSync(env.BRAINSTEM_TEST_CPU, 'utf8'));
  rmSync(cpuDir, { recursive: true, force: true });
}
process.exit(signalled ? 128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signalled] : status);

/** The --cpu table, from the lines scripts/file-cpu.mjs and scripts/test-services.mjs wrote. */
function printCpu(record) {
  const files = new Map();
  const postgres = new Map();
  let services = 0;
  let servicesPostgres = 0;
  let servicesOwn = 0;
  for (const line of record.split('\n')) {
    const f = line.split('\t');
    if (f[0] === 'postgres') postgres.set(f[1], Number(f[2]));
    else if (f[0] === 'services') [services, servicesPostgres, servicesOwn] = [Number(f[1]), Number(f[2]), Number(f[3])];
    else if (f.length === 5) files.set(f[0], { own: Number(f[1]), children: Number(f[2]), wall: Number(f[3]), file: f[4] });
  }
  // A group's files (scripts/run-group.mjs: pid.index) are taken out of their process's line, which keeps the group's start.
  for (const [key, r] of files) {
    const group = key.includes('.') ? files.get(key.split('.')[0]) : undefined;
    if (!group) continue;
    group.own -= r.own;
    group.children -= r.children;
    group.members = (group.members ?? 0) + 1;
  }
  const rows = [...files].map(([pid, r]) => ({ ...r, pg: postgres.get(pid) ?? 0 })).map((r) => ({ ...r, total: r.own + r.children + r.pg }));
  rows.sort((a, b) => b.total - a.total);
  const s = (ms) => (ms / 1000).toFixed(1).padStart(7);
  const sum = (k) => rows.reduce((a, r) => a + r[k], 0);
  const pgFiles = [...postgres.values()].reduce((a, ms) => a + ms, 0);
  console.log(`\nCPU per file (user + system, s), the most first: ${rows.filter((r) => !r.members).length} files`);
  console.log(`${'total'.padStart(7)} ${'own'.padStart(7)} ${'child'.padStart(7)} ${'pg'.padStart(7)} ${'wall'.padStart(7)}  file`);
  for (const r of rows)
    console.log(
      `${s(r.total)} ${s(r.own)} ${s(r.children)} ${s(r.pg)} ${s(r.wall)}  ${r.members ? `(a group's process: its start and what its ${r.members} files did not)` : relative(join(root, 'dist'), r.file).replace(/\.js$/, '.ts')}`,
    );
  console.log(`${s(sum('total'))} ${s(sum('own'))} ${s(sum('children'))} ${s(sum('pg'))} ${''.padStart(7)}  all files`);
  const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    `${s(services)} shared services in all: PostgreSQL ${sec(servicesPostgres)} (${sec(pgFiles)} of it charged to files above), Chromium ${sec(services - servicesPostgres - servicesOwn)}, their starter ${sec(servicesOwn)}`,
  );
  const self = readFileSync('/proc/self/stat', 'utf8');
  const f = self.slice(self.lastIndexOf(')') + 2).split(' ');
  const ticks = f.slice(11, 15).reduce((a, t) => a + Number(t), 0);
  console.log(`${s(ticks * 10)} the whole run: this runner and everything it reaped`);
}
