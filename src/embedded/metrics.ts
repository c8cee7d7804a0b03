import type { Registry } from 'prom-client';
import { externalCounter, externalGauge, newRegistry, requestMetrics, tallyCounter, UNMATCHED_ROUTE } from '../http/metrics.js';
import type { RequestObserver } from '../http/observe.js';

/** Metric names of `brainstem serve` start with this. */
export const SERVE_METRICS_PREFIX = 'brainstem';

/** The routes whose requests are also counted under their own names. */
const CONFIG_PULL_ROUTE = '/v1/config';
const TELEMETRY_ROUTE = '/v1/telemetry';

/** What the services count themselves, read at scrape time. */
export interface ServeMetricSources {
  webhookAttempts(): { succeeded: number; retrying: number; failed: number };
  webhooksInFlight(): number;
  renders(): { rendering: number; succeeded: number; failed: number };
}

/**
 * The registry behind serve's /metrics and the request observer that feeds it: requests by
 * route and status with latency histograms, config pulls and telemetry reports by status,
 * rate-limit refusals by route, webhook delivery attempts and renders by outcome, and the
 * process metrics.
 */
export function serveMetrics(): { registry: Registry; observe: RequestObserver; attach(sources: ServeMetricSources): void } {
  const registry = newRegistry();
  const requests = requestMetrics(registry, SERVE_METRICS_PREFIX);
  const pulled = tallyCounter(
    registry,
    `${SERVE_METRICS_PREFIX}_config_pulls_total`,
    'Config pulls by sidecars (GET /v1/config), by status (304 = unchanged)',
    'status',
  );
  const reported = tallyCounter(
    registry,
    `${SERVE_METRICS_PREFIX}_telemetry_reports_total`,
    'Telemetry reports received (POST /v1/telemetry), by status',
    'status',
  );
  const limited = tallyCounter(registry, `${SERVE_METRICS_PREFIX}_rate_limited_total`, 'Requests refused with 429 rate_limited, by route pattern', 'route');
  const observe: RequestObserver = (r) => {
    requests(r);
    if (r.route === CONFIG_PULL_ROUTE && r.method === 'GET') pulled(r.status);
    else if (r.route === TELEMETRY_ROUTE) reported(r.status);
    if (r.status === 429) limited(r.route ?? UNMATCHED_ROUTE);
  };
  const attach = (s: ServeMetricSources): void => {
    externalCounter(
      registry,
      `${SERVE_METRICS_PREFIX}_webhook_delivery_attempts_total`,
      'Webhook delivery attempts by outcome: succeeded, retrying (failed, retry scheduled), failed (given up)',
      s.webhookAttempts,
      'outcome',
    );
    externalGauge(registry, `${SERVE_METRICS_PREFIX}_webhook_deliveries_in_flight`, 'Webhook deliveries being sent now', s.webhooksInFlight);
    externalCounter(
      registry,
      `${SERVE_METRICS_PREFIX}_video_renders_total`,
      'Video renders finished, by outcome',
      () => {
        const { succeeded, failed } = s.renders();
        return { succeeded, failed };
      },
      'outcome',
    );
    externalGauge(registry, `${SERVE_METRICS_PREFIX}_video_renders_running`, 'Video renders running now', () => s.renders().rendering);
  };
  return { registry, observe, attach };
}
