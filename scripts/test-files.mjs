// Which test files a run covers, listed from the sources: test/**/*.test.ts, each run from its
// compiled twin under dist/test. Listing from the sources means a test deleted from test/
// never runs again from a stale .js that an earlier build left in dist/.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The five slowest suites, left out by `npm run test:fast` (CI runs them). Measured by timing
 * each file alone on the whole suite: the dashboard's browser flow, the simulator's scenarios
 * against real sidecars, ffmpeg renders, renders across a server restart, and whole-sidecar
 * determinism across worker counts.
 */
export const SLOW_SUITES = [
  'test/dashboard/dashboard.test.ts',
  'test/sim/scenarios.test.ts',
  'test/video/render.test.ts',
  'test/video/restart.test.ts',
  'test/sidecar/determinism.test.ts',
];

/** Test sources under ROOT/test, relative to ROOT, sorted. */
export function testSources(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.test.ts')) out.push(relative(root, path));
    }
  };
  walk(join(root, 'test'));
  return out;
}

/**
 * The compiled files to run: every source whose path contains one of `filter` (all when
 * empty), less SLOW_SUITES when `fast`.
 */
export function selectTests(root, { fast = false, filter = [] } = {}) {
  return testSources(root)
    .filter((f) => filter.length === 0 || filter.some((p) => f.includes(p)))
    .filter((f) => !fast || !SLOW_SUITES.includes(f))
    .map((f) => join(root, 'dist', f.replace(/\.ts$/, '.js')));
}
