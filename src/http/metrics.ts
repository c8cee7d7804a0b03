import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Handler, Request } from './server.js';
import type { RequestObserver } from './observe.js';

/** Seconds; from well under a millisecond (a cached config pull) to a slow upload. */
export const REQUEST_SECONDS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** The route label of a request no route matched (one value, so unknown paths cannot grow the series). */
export const UNMATCHED_ROUTE = 'unmatched';

/** A registry with the process metrics (CPU, memory, event loop, handles) prom-client collects. */
export function newRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * `GET /metrics` in the Prometheus text format, behind `authorize` (which throws an HttpError
 * to refuse). Everything is read at scrape time: collect() callbacks copy the services' plain
 * counters, so no request path pays for a metric it does not itself count.
 */
export function metricsHandler(registry: Registry, authorize: (req: Request) => unknown): Handler {
  return async (req) => {
    await authorize(req);
    return { status: 200, headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' }, body: await registry.metrics() };
  };
}

/** Requests by method, route pattern and status, and their latency, counted by a request observer. */
export function requestMetrics(registry: Registry, prefix: string): RequestObserver {
  const total = new Counter({
    name: `${prefix}_http_requests_total`,
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: `${prefix}_http_request_duration_seconds`,
    help: "Time from a request's arrival until its response was finished, by method and route pattern",
    labelNames: ['method', 'route'],
    buckets: [...REQUEST_SECONDS_BUCKETS],
    registers: [registry],
  });
  return (r) => {
    const route = r.route ?? UNMATCHED_ROUTE;
    total.inc({ method: r.method, route, status: r.status });
    seconds.observe({ method: r.method, route }, r.micros / 1e6);
  };
}

/**
 * A counter whose values live elsewhere (a service's plain counters), copied in at scrape
 * time. `read` returns the current totals by label value (of the one label `label`), or a
 * single number when there is no label.
 */
export function externalCounter(registry: Registry, name: string, help: string, read: () => number): void;
export function externalCounter(registry: Registry, name: string, help: string, read: () => Record<string, number>, label: string): void;
export function externalCounter(registry: Registry, name: string, help: string, read: () => number | Record<string, number>, label?: string): void {
  new Counter({
    name,
    help,
    labelNames: label ? [label] : [],
    registers: [registry],
    collect() {
      this.reset();
      const values = read();
      if (typeof values === 'number') this.inc(values);
      else for (const key in values) this.inc({ [label!]: key }, values[key]!);
    },
  });
}

/** A gauge read at scrape time. */
export function externalGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A histogram's state as Prometheus shows it: cumulative counts at each upper edge, the sum and the count. */
export interface HistogramSnapshot {
  /** Upper edges (`le`), ascending, in the metric's unit. */
  readonly edges: readonly number[];
  /** How many values were at most each edge. */
  readonly cumulative: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/**
 * A histogram kept elsewhere (a service's own fixed-bucket histogram), rendered at scrape
 * time: prom-client's Histogram can only be fed one observation at a time, which would put
 * it on the path being measured.
 */
export function externalHistogram(registry: Registry, name: string, help: string, read: () => HistogramSnapshot): void {
  registry.registerMetric({
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    reset() {},
    get: async () => {
      const h = read();
      const values: { metricName: string; labels: Record<string, string>; value: number }[] = h.edges.map((le, i) => ({
        metricName: `${name}_bucket`,
        labels: { le: String(le) },
        value: h.cumulative[i]!,
      }));
      values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: h.count });
      return {
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: [...values, { metricName: `${name}_sum`, labels: {}, value: h.sum }, { metricName: `${name}_count`, labels: {}, value: h.count }],
      };
    },
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}
