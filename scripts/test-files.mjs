// Which test files a run covers, listed from the sources: test/**/*.test.ts, each run from its
// compiled twin under dist/test. Listing from the sources means a test deleted from test/
// never runs again from a stale .js that an earlier build left in dist/.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The unit tier (`npm run test:unit`): suites of pure modules — the brain, the tick schema and
 * its readers and writers, codecs, signing, validators, the SSRF address rules, the
 * simulator's world — that start no server, database, browser or child process, so the tier
 * runs in well under a minute. Path prefixes under the repository root. A test
 * (test/scripts/test-files.test.ts) holds every file of the tier to that: none imports the
 * server, the CLI, child processes or the test helpers that start servers.
 */
export const UNIT_SUITES = [
  'test/architecture.test.ts',
  'test/bundles.test.ts',
  'test/docs.test.ts',
  'test/brain/',
  'test/signing/',
  'test/sidecar/tick/histogram',
  'test/sidecar/tick/tick-json',
  'test/sidecar/tick/tick-msgpack',
  'test/sidecar/tick/tick-readers-fuzz',
  'test/sidecar/tick/tick-schema-guard',
  'test/sidecar/state/players',
  'test/sidecar/link/telemetry-buffer',
  'test/http/errors',
  'test/http/limits',
  'test/http/ratelimit',
  'test/net/ssrf',
  'test/plugins/protocol',
  'test/scripts/',
  'test/sim/world',
  'test/sim/scenario-check',
  'test/video/image-frames',
  'test/video/range',
  'test/video/photo-data-url',
  'test/dialogue/backoff',
  'test/dialogue/cache',
  'test/dialogue/speech',
  'test/dialogue/strip-names',
  'test/controlplane/replay',
  'test/identity/hash-gate',
  'test/cli/documented-flags',
  'test/cli/lazy-commands',
  'test/dashboard/server-mirror',
];

/**
 * The slowest suites, left out by `npm run test:fast` (CI runs them): together about two
 * thirds of the whole suite's test time. Chosen from `node scripts/run-tests.mjs --timings`
 * on the whole suite (2026-11-28, the last thirty-one 2026-11-29; re-measure when the fast tier drifts past three minutes):
 * renders and crash recovery across replicas and restarts, the browser tests, the simulator's
 * scenarios, the route fuzz, PostgreSQL contract suites and migrations, TLS and port checks
 * that start whole commands.
 */
export const SLOW_SUITES = [
  'test/video/replicas.test.ts',
  'test/webhooks/replicas.test.ts',
  'test/video/restart.test.ts',
  'test/sim/scenarios.test.ts',
  'test/dashboard/dashboard.test.ts',
  'test/http/route-fuzz.test.ts',
  'test/http/route-fuzz-postgres.test.ts',
  'test/http/route-fuzz-sidecar.test.ts',
  'test/cli/commands/migrate-store.test.ts',
  'test/video/render.test.ts',
  'test/dashboard/connection.test.ts',
  'test/stack/replicas.test.ts',
  'test/sidecar/determinism.test.ts',
  'test/bench/tick.test.ts',
  'test/webhooks/listen.test.ts',
  'test/cli/commands/config.test.ts',
  'test/video/object-store.test.ts',
  'test/http/tls-files.test.ts',
  'test/http/issue-14-port-in-use.test.ts',
  'test/dashboard/billing.test.ts',
  'test/cli/commands/serve-crash.test.ts',
  'test/stack/sidecar-control-plane.test.ts',
  'test/webhooks/limits.test.ts',
  'test/video/signed-urls.test.ts',
  'test/cli/commands/serve-database.test.ts',
  'test/dashboard/access.test.ts',
  'test/clients/csharp-live.test.ts',
  'test/cli/commands/serve-roles.test.ts',
  'test/stack/up.test.ts',
  'test/sidecar/dialogue.test.ts',
  'test/stack/up-postgres.test.ts',
  'test/stack/data-dir.test.ts',
  'test/webhooks/management.test.ts',
  'test/sim/replay-page.test.ts',
  'test/cli/data-dir-errors.test.ts',
  'test/webhooks/postgres-store.test.ts',
  'test/video/postgres-store.test.ts',
  'test/video/tour-segments.test.ts',
  'test/sim/demo-dialogue.test.ts',
  'test/webhooks/throttle-order.test.ts',
  'test/video/tour-deterministic.test.ts',
  'test/video/tour-formats.test.ts',
  'test/video/video-cancel.test.ts',
  'test/dashboard/live-map.test.ts',
  'test/live/cli.test.ts',
  'test/bench/render-workers.test.ts',
  'test/controlplane/billing-grants.test.ts',
  'test/cli/shipped-without-test-and-bench.test.ts',
  'test/cli/commands/webhooks-trigger.test.ts',
  'test/bench/push-replicas.test.ts',
  'test/widget/browser.test.ts',
  'test/live/replica-processes.test.ts',
  'test/dashboard/conversations.test.ts',
  'test/cli/commands/plugins.test.ts',
  'test/stack/up-crash.test.ts',
  'test/cli/brainstem-log.test.ts',
  'test/bench/scale-out-flags.test.ts',
  'test/dashboard/flags.test.ts',
  'test/cli/migrate-store-progress.test.ts',
  'test/stack/up-api-key.test.ts',
  'test/dashboard/papercuts.test.ts',
  'test/bench/believability.test.ts',
  'test/widget/replicas.test.ts',
  'test/store/postgres.test.ts',
  'test/video/object-store-media.test.ts',
  'test/store/broadcast.test.ts',
  'test/cli/commands/bench-tick.test.ts',
  'test/dialogue/model-check.test.ts',
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

/** Whether a test source belongs to the unit tier. */
export function isUnitSuite(file) {
  return UNIT_SUITES.some((p) => file.startsWith(p));
}

/**
 * The compiled files to run: every source whose path contains one of `filter` (all when
 * empty); less SLOW_SUITES when `fast`; only UNIT_SUITES when `unit`. Sorted by path, or with
 * `slowestFirst` SLOW_SUITES first in their order (slowest first), so that a run whose files
 * start in this order does not end waiting on a long file that started last.
 */
export function selectTests(root, { fast = false, unit = false, filter = [], slowestFirst = false } = {}) {
  const rank = (f) => {
    const i = SLOW_SUITES.indexOf(f);
    return i === -1 ? SLOW_SUITES.length : i;
  };
  const files = testSources(root)
    .filter((f) => filter.length === 0 || filter.some((p) => f.includes(p)))
    .filter((f) => !fast || !SLOW_SUITES.includes(f))
    .filter((f) => !unit || isUnitSuite(f));
  if (slowestFirst) files.sort((a, b) => rank(a) - rank(b));
  return files.map((f) => join(root, 'dist', f.replace(/\.ts$/, '.js')));
}
