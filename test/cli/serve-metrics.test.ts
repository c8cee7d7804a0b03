import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';

test('serve /metrics: Prometheus text for the admin token only; requests, pulls, refusals, deliveries, renders and process metrics', async () => {
  const s = await startTestServer({ limits: { session: { limit: 2, windowMs: 60_000 } } });
  try {
    assert.equal((await s.call('GET', '/metrics')).status, 401);
    const { token } = await tenantSession(s);
    assert.equal((await s.call('GET', '/metrics', { token })).status, 403);
    // Past the session limit: a 429 that the metrics count by route.
    for (let i = 0; i < 4; i++) await s.call('GET', '/v1/servers', { token });
    await s.call('GET', '/v1/config');
    const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const body = await res.text();
    assert.match(body, /^brainstem_http_requests_total\{method="GET",route="\/v1\/servers",status="429"\} \d+$/m);
    assert.match(body, /^brainstem_rate_limited_total\{route="\/v1\/servers"\} [1-9]/m);
    assert.match(body, /^brainstem_config_pulls_total\{status="401"\} 1$/m);
    assert.match(body, /^brainstem_http_request_duration_seconds_bucket\{le="0\.001",method="GET",route="\/v1\/servers"\} \d+$/m);
    assert.match(body, /^# TYPE brainstem_webhook_delivery_attempts_total counter$/m);
    assert.match(body, /^brainstem_webhook_delivery_attempts_total\{outcome="succeeded"\} 0$/m);
    assert.match(body, /^brainstem_video_renders_total\{outcome="failed"\} 0$/m);
    assert.match(body, /^brainstem_video_renders_running 0$/m);
    assert.match(body, /^process_cpu_user_seconds_total /m);
    assert.match(body, /^nodejs_heap_size_used_bytes /m);
    // Never a token or an id from a path.
    assert.doesNotMatch(body, /bss_|bsa_/);
  } finally {
    await s.stop();
  }
});

test('without SERVICE_ADMIN_TOKEN, /metrics and the admin routes answer 401 naming the variable that opens them', async () => {
  const s = await startTestServer({ adminToken: undefined });
  try {
    for (const path of ['/metrics', '/v1/admin/tenants']) {
      const res = await s.call('GET', path, { token: 'bsa_anything' });
      assert.equal(res.status, 401, path);
      assert.match(res.body.error.message, /SERVICE_ADMIN_TOKEN/, path);
    }
  } finally {
    await s.stop();
  }
});
