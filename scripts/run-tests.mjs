// Runs the test suite with node's test runner (Node 20 has no glob arguments for --test, so
// the files are listed by scripts/test-files.mjs, from the sources).
//
//   node scripts/run-tests.mjs [--unit | --fast] [--timings] [NAME...]
//
// NAME keeps only the files whose path contains it. --unit runs only the suites of pure
// modules (UNIT_SUITES, `npm run test:unit`, well under a minute); --fast leaves out the
// slowest suites (SLOW_SUITES, `npm run test:fast`), for day-to-day work; CI runs everything.
// --timings also prints each file's test time, slowest first, to choose SLOW_SUITES by.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectTests } from './test-files.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flags = new Set(['--fast', '--unit', '--timings']);
const filter = args.filter((a) => !flags.has(a));
const unknown = filter.filter((a) => a.startsWith('--'));
if (unknown.length > 0) {
  console.error(`unknown option ${unknown[0]}; the options are --unit, --fast and --timings`);
  process.exit(1);
}
const compiled = selectTests(root, { fast: args.includes('--fast'), unit: args.includes('--unit'), filter });
if (compiled.length === 0) {
  console.error(`no test files under test/ match ${filter.join(' ')}`);
  process.exit(1);
}
const missing = compiled.filter((f) => !existsSync(f));
if (missing.length > 0) {
  console.error(`not built: ${missing.map((f) => relative(root, f)).join(', ')}; run npm run build first`);
  process.exit(1);
}
const reporters = [];
let timings = null;
if (args.includes('--timings')) {
  timings = mkdtempSync(join(tmpdir(), 'brainstem-timings-'));
  const out = join(timings, 'times.tsv');
  reporters.push('--test-reporter=spec', '--test-reporter-destination=stdout');
  reporters.push(`--test-reporter=${join(root, 'scripts', 'timing-reporter.mjs')}`, `--test-reporter-destination=${out}`);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=120000', ...reporters, ...compiled], {
  stdio: 'inherit',
  env: { ...process.env, BRAINSTEM_LOG: process.env.BRAINSTEM_LOG ?? 'silent' },
});
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
process.exit(result.status ?? 1);
