import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runWebhooksBench } from '../../bench/webhooks/run.js';
import { failedAttemptsIn, withLogs } from '../../bench/webhooks/replicas.js';
import { SCENARIOS } from '../../bench/webhooks/scenarios.js';
import { cli } from '../helpers/paths.js';

// `bench webhooks`: one SQLite process in rounds (a raw-POST baseline before every scenario run and
// one after the last, each scenario run compared with the baselines just before and after it); with
// --database, the failed attempts that explain a delivery received twice.

test('bench webhooks, two scenarios in two rounds: a baseline before every scenario run and one after, each run against the two around it, the median reported', async () => {
  const chosen = ['10 endpoints', '100 endpoints'].map((name) => SCENARIOS.find((s) => s.name === name)!);
  const r = await runWebhooksBench({ deliveries: 200, events: 100, rounds: 2 }, chosen);
  // base, 10, base, 100, base, 10, base, 100, base
  assert.equal(r.baselines.length, 5);
  assert.ok(r.baselines.includes(r.baseline.requestsPerSec));
  assert.deepEqual(
    r.scenarios.map((s) => s.baselinesAround),
    [
      [0, 2],
      [1, 3],
    ],
  );
  for (const s of r.scenarios) {
    assert.equal(s.roundsVsBaseline.length, 2);
    // Of two rounds the lower one is the median, and the run reported is that round's.
    assert.equal(s.vsBaseline, Math.min(...s.roundsVsBaseline));
    const at = s.baselinesAround[s.roundsVsBaseline.indexOf(s.vsBaseline)]!;
    const around = (r.baselines[at]! + r.baselines[at + 1]!) / 2;
    assert.ok(Math.abs(s.vsBaseline - s.deliveriesPerSec / around) < 0.001);
    assert.ok(Math.abs(s.vsBestBaseline - s.deliveriesPerSec / Math.max(...r.baselines)) < 0.001);
    assert.equal(s.received, s.deliveries);
    // The fill's WAL pages were copied into the file before the clock started.
    assert.equal(s.walPagesAtStart, 0);
  }
});

test('bench webhooks refuses --rounds out of range without --database too', () => {
  const bad = spawnSync(process.execPath, [cli, 'bench', 'webhooks', '--rounds', '0'], { encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--rounds/);
});

test("bench webhooks --database counts a serve process's failed attempts (retrying and given up) from its /metrics", () => {
  const page = [
    '# HELP brainstem_webhook_delivery_attempts_total Webhook delivery attempts by outcome',
    '# TYPE brainstem_webhook_delivery_attempts_total counter',
    'brainstem_webhook_delivery_attempts_total{outcome="succeeded"} 5000',
    'brainstem_webhook_delivery_attempts_total{outcome="retrying"} 3',
    'brainstem_webhook_delivery_attempts_total{outcome="failed"} 1',
    'brainstem_webhook_deliveries_in_flight 0',
  ].join('\n');
  assert.equal(failedAttemptsIn(page), 4);
  assert.equal(failedAttemptsIn(''), 0);
});

test("a failed bench webhooks --database configuration's error carries what each serve process last wrote to stderr", () => {
  const e = withLogs(new Error('POST /v1/widgets/w/events: 500'), [
    '',
    '{"level":"error","msg":"request failed","error":"timeout exceeded when trying to connect"}\n',
  ]);
  assert.match(e.message, /^POST \/v1\/widgets\/w\/events: 500\n--- serve process 1 stderr/);
  assert.match(e.message, /timeout exceeded when trying to connect/);
  assert.doesNotMatch(e.message, /serve process 0/);
  assert.equal(withLogs('x', ['', '']).message, 'x');
});
