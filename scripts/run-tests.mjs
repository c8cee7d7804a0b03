// Runs the test suite with node's test runner (Node 20 has no glob arguments for --test, so
// the files are listed by scripts/test-files.mjs, from the sources).
//
//   node scripts/run-tests.mjs [--fast] [NAME...]
//
// NAME keeps only the files whose path contains it. --fast leaves out the slowest suites
// (SLOW_SUITES), for day-to-day work (`npm run test:fast`); CI runs everything.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { selectTests } from './test-files.mjs';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const filter = args.filter((a) => a !== '--fast');
const compiled = selectTests(root, { fast: args.includes('--fast'), filter });
if (compiled.length === 0) {
  console.error(`no test files under test/ match ${filter.join(' ')}`);
  process.exit(1);
}
const missing = compiled.filter((f) => !existsSync(f));
if (missing.length > 0) {
  console.error(`not built: ${missing.map((f) => relative(root, f)).join(', ')}; run npm run build first`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=120000', ...compiled], {
  stdio: 'inherit',
  env: { ...process.env, BRAINSTEM_LOG: process.env.BRAINSTEM_LOG ?? 'silent' },
});
process.exit(result.status ?? 1);
