import type { Registry } from 'prom-client';
import { externalCounter, externalGauge, externalHistogram, metricsHandler, newRegistry } from '../http/metrics.js';
import type { HttpServer } from '../http/server.js';
import { GATE_HEADERS, type BearerGate } from './auth.js';
import type { ConfigSource } from './config/config-source.js';
import type { Evaluator } from './tick/evaluator.js';
import { BATCH_SIZE_EDGES, type TickHandler } from './tick/handler.js';

/** Metric names of the sidecar start with this. */
export const SIDECAR_METRICS_PREFIX = 'brainstem_sidecar';

/** Upper edges of the tick latency histogram, µs: 25 µs to 1 s. */
export const TICK_LATENCY_EDGES_US = [25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 1_000_000] as const;

/**
 * The sidecar's registry: ticks by outcome, tick latency and /ticks batch sizes as histograms,
 * agents held, the applied bundle version and the process metrics. Every value is read from
 * the counters and histogram the tick path keeps anyway, at scrape time: the tick path does
 * no work for /metrics.
 */
export function sidecarRegistry(ticks: TickHandler, evaluator: Evaluator, source: ConfigSource, agents: () => number | null): Registry {
  const registry = newRegistry();
  const p = SIDECAR_METRICS_PREFIX;
  externalCounter(registry, `${p}_ticks_total`, 'Ticks answered, by outcome: ok (200), rejected (4xx), failed (500)', () => ({ ...ticks.counters }), 'outcome');
  const edgesSeconds = TICK_LATENCY_EDGES_US.map((us) => us / 1e6);
  externalHistogram(
    registry,
    `${p}_tick_latency_seconds`,
    "Time from a tick's arrival until its reply was encoded (buckets about 12% wide, a value counted at the next edge up)",
    () => ({
      edges: edgesSeconds,
      cumulative: ticks.latency.cumulative(TICK_LATENCY_EDGES_US),
      sum: ticks.latency.sumUs / 1e6,
      count: ticks.latency.count,
    }),
  );
  externalHistogram(registry, `${p}_batch_size`, 'Ticks per POST /ticks batch', () => {
    let seen = 0;
    const cumulative = Array.from(ticks.batchSizes, (n) => (seen += n));
    return { edges: BATCH_SIZE_EDGES, cumulative, sum: ticks.batchTicks, count: seen };
  });
  externalGauge(
    registry,
    `${p}_agents`,
    'Characters the brains hold (with workers: as of the last telemetry drain)',
    () => evaluator.liveAgents ?? agents() ?? 0,
  );
  externalGauge(registry, `${p}_bundle_version`, 'Version of the configuration bundle applied', () => source.status().version);
  return registry;
}

/** GET /metrics on the sidecar, behind its token when one is set (any of the three forms /tick takes). */
export function mountMetrics(server: HttpServer, gate: BearerGate | null, registry: Registry): void {
  server.get(
    '/metrics',
    metricsHandler(registry, (req) => gate?.checkRequest(req)),
    { headers: GATE_HEADERS },
  );
}
