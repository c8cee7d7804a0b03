// Runs every compiled test file under dist/test with node's test runner. Node 20 has no glob
// arguments for --test, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.test.js')) files.push(path);
  }
};
walk(join(root, 'dist', 'test'));
const filter = process.argv.slice(2);
const selected = filter.length ? files.filter((f) => filter.some((p) => f.includes(p))) : files;
if (selected.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=120000', ...selected],
  { stdio: 'inherit', env: { ...process.env, BRAINSTEM_LOG: process.env.BRAINSTEM_LOG ?? 'silent' } },
);
process.exit(result.status ?? 1);
