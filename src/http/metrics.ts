import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
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

/** One route and method's requests: counts by status and the latency histogram, plain numbers. */
class RouteTally {
  readonly byStatus = new Map<number, number>();
  /** Non-cumulative: bucket i counts the requests above edge i-1 and at most edge i; the last one, above every edge. */
  readonly buckets = new Float64Array(REQUEST_SECONDS_BUCKETS.length + 1);
  sum = 0;
  count = 0;
}

/** REQUEST_SECONDS_BUCKETS in microseconds, the unit the observer is told. */
const BUCKET_MICROS = REQUEST_SECONDS_BUCKETS.map((s) => s * 1e6);

type PromMetric = Parameters<Registry['registerMetric']>[0];
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A metric prom-client renders from `values()` at scrape time (the shape of its own metrics' get()). */
function scrapedMetric(registry: Registry, name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]): void {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: 'sum',
    reset() {},
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
  } as unknown as PromMetric);
}

/**
 * Requests by method, route pattern and status, and their latency, counted by a request
 * observer. Every request pays two map lookups and a few additions into plain numbers;
 * prom-client's own Counter and Histogram hash a label object per call, which cost a signed
 * config pull about an eighth of its time (bench/RESULTS.md, control-plane profile). The
 * series are rendered at scrape time, and are bounded: route patterns and methods are the
 * server's own, statuses are three digits.
 */
export function requestMetrics(registry: Registry, prefix: string): RequestObserver {
  const routes = new Map<string, Map<string, RouteTally>>();
  const each = (fn: (route: string, method: string, t: RouteTally) => void): void => {
    for (const [route, methods] of routes) for (const [method, t] of methods) fn(route, method, t);
  };
  scrapedMetric(registry, `${prefix}_http_requests_total`, 'HTTP requests answered, by method, route pattern and status', 'counter', () => {
    const out: Sample[] = [];
    each((route, method, t) => {
      for (const [status, value] of t.byStatus) out.push({ labels: { method, route, status }, value });
    });
    return out;
  });
  const name = `${prefix}_http_request_duration_seconds`;
  scrapedMetric(registry, name, "Time from a request's arrival until its response was finished, by method and route pattern", 'histogram', () => {
    const out: Sample[] = [];
    each((route, method, t) => {
      let cumulative = 0;
      for (let i = 0; i < REQUEST_SECONDS_BUCKETS.length; i++) {
        cumulative += t.buckets[i]!;
        out.push({ metricName: `${name}_bucket`, labels: { le: REQUEST_SECONDS_BUCKETS[i]!, method, route }, value: cumulative });
      }
      out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', method, route }, value: t.count });
      out.push({ metricName: `${name}_sum`, labels: { method, route }, value: t.sum });
      out.push({ metricName: `${name}_count`, labels: { method, route }, value: t.count });
    });
    return out;
  });
  return (r) => {
    const route = r.route ?? UNMATCHED_ROUTE;
    let methods = routes.get(route);
    if (methods === undefined) routes.set(route, (methods = new Map()));
    let t = methods.get(r.method);
    if (t === undefined) methods.set(r.method, (t = new RouteTally()));
    t.byStatus.set(r.status, (t.byStatus.get(r.status) ?? 0) + 1);
    let i = 0;
    while (i < BUCKET_MICROS.length && r.micros > BUCKET_MICROS[i]!) i++;
    t.buckets[i]!++;
    t.sum += r.micros / 1e6;
    t.count++;
  };
}

/**
 * Counts by the values of one label, kept as plain numbers and rendered at scrape time (for
 * counters fed on a request path).
 */
export function tallyCounter(registry: Registry, name: string, help: string, label: string): (value: string | number) => void {
  const counts = new Map<string | number, number>();
  scrapedMetric(registry, name, help, 'counter', () => [...counts].map(([v, value]) => ({ labels: { [label]: v }, value })));
  return (v) => counts.set(v, (counts.get(v) ?? 0) + 1);
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
