import test from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { requestMetrics, tallyCounter } from '../../src/http/metrics.js';

// The request metrics are plain numbers rendered at scrape time (prom-client's own Counter and
// Histogram cost a signed pull an eighth of its time): the text must be what those gave.

test('request metrics: counts by method, route and status; latency buckets cumulative with le inclusive, sum and count', async () => {
  const registry = new Registry();
  const observe = requestMetrics(registry, 't');
  observe({ method: 'GET', route: '/v1/config', status: 304, micros: 100 });
  observe({ method: 'GET', route: '/v1/config', status: 304, micros: 101 });
  observe({ method: 'GET', route: '/v1/config', status: 401, micros: 20_000_000 });
  observe({ method: 'POST', route: null, status: 404, micros: 5 });
  const text = await registry.metrics();
  assert.match(text, /^# TYPE t_http_requests_total counter$/m);
  assert.match(text, /^t_http_requests_total\{method="GET",route="\/v1\/config",status="304"\} 2$/m);
  assert.match(text, /^t_http_requests_total\{method="GET",route="\/v1\/config",status="401"\} 1$/m);
  assert.match(text, /^t_http_requests_total\{method="POST",route="unmatched",status="404"\} 1$/m);
  assert.match(text, /^# TYPE t_http_request_duration_seconds histogram$/m);
  // 100 µs is at most the 0.0001 s edge; 101 µs is not; 20 s is past every edge.
  assert.match(text, /^t_http_request_duration_seconds_bucket\{le="0.0001",method="GET",route="\/v1\/config"\} 1$/m);
  assert.match(text, /^t_http_request_duration_seconds_bucket\{le="0.00025",method="GET",route="\/v1\/config"\} 2$/m);
  assert.match(text, /^t_http_request_duration_seconds_bucket\{le="10",method="GET",route="\/v1\/config"\} 2$/m);
  assert.match(text, /^t_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/config"\} 3$/m);
  assert.match(text, /^t_http_request_duration_seconds_count\{method="GET",route="\/v1\/config"\} 3$/m);
  assert.match(text, /^t_http_request_duration_seconds_sum\{method="GET",route="\/v1\/config"\} 20\.000201$/m);
});

test('a tally counter renders one series per label value', async () => {
  const registry = new Registry();
  const count = tallyCounter(registry, 't_pulls_total', 'pulls', 'status');
  count(304);
  count(304);
  count(200);
  const text = await registry.metrics();
  assert.match(text, /^t_pulls_total\{status="304"\} 2$/m);
  assert.match(text, /^t_pulls_total\{status="200"\} 1$/m);
});
