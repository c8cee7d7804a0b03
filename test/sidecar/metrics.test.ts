import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { LatencyHistogram } from '../../src/sidecar/tick/histogram.js';
import type { RequestRecord } from '../../src/http/observe.js';
import { fullTick, post, postTo, startTest } from './helpers.js';

test('sidecar GET /metrics: behind the token in all three forms; ticks, latency and batch-size histograms, agents, bundle version, process metrics', async () => {
  const s = await startTest({ token: 'sekret' });
  try {
    assert.equal((await fetch(`${s.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    for (const headers of [{ authorization: 'Bearer sekret' }, { 'x-brain-token': 'sekret' }] as Record<string, string>[])
      assert.equal((await fetch(`${s.url}/metrics`, { headers })).status, 200);
    assert.equal((await fetch(`${s.url}/metrics?token=sekret`)).status, 200);

    const auth = { authorization: 'Bearer sekret' };
    await post(s.url, fullTick(1), 'json', auth);
    await post(s.url, fullTick(2), 'json', auth);
    await post(s.url, '{not json', 'json', auth);
    await postTo(`${s.url}/ticks`, [fullTick(3), fullTick(4), fullTick(5)], 'json', auth);
    const res = await fetch(`${s.url}/metrics`, { headers: auth });
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const body = await res.text();
    assert.match(body, /^brainstem_sidecar_ticks_total\{outcome="ok"\} 5$/m);
    assert.match(body, /^brainstem_sidecar_ticks_total\{outcome="rejected"\} 1$/m);
    assert.match(body, /^brainstem_sidecar_ticks_total\{outcome="failed"\} 0$/m);
    assert.match(body, /^# TYPE brainstem_sidecar_tick_latency_seconds histogram$/m);
    assert.match(body, /^brainstem_sidecar_tick_latency_seconds_bucket\{le="\+Inf"\} 5$/m);
    assert.match(body, /^brainstem_sidecar_tick_latency_seconds_count 5$/m);
    assert.match(body, /^brainstem_sidecar_batch_size_bucket\{le="2"\} 0$/m);
    assert.match(body, /^brainstem_sidecar_batch_size_bucket\{le="4"\} 1$/m);
    assert.match(body, /^brainstem_sidecar_batch_size_sum 3$/m);
    assert.match(body, /^brainstem_sidecar_batch_size_count 1$/m);
    assert.match(body, /^brainstem_sidecar_agents 5$/m);
    assert.match(body, new RegExp(`^brainstem_sidecar_bundle_version ${DEFAULT_BUNDLE.version}$`, 'm'));
    assert.match(body, /^process_resident_memory_bytes /m);
    assert.doesNotMatch(body, /sekret/);
  } finally {
    await s.close();
  }
});

test('the latency histogram reports cumulative counts at fixed edges, never a value as faster than it was', () => {
  const h = new LatencyHistogram();
  for (const us of [3, 40, 90, 900, 20_000]) h.record(us);
  assert.deepEqual(h.cumulative([10, 100, 1_000, 10_000, 1_000_000]), [1, 3, 4, 4, 5]);
  assert.equal(h.sumUs, 3 + 40 + 90 + 900 + 20_000);
  // 101 µs lands in a bucket whose upper edge is above 100: counted at the next edge, not at 100.
  const g = new LatencyHistogram();
  g.record(101);
  assert.deepEqual(g.cumulative([100, 1_000]), [0, 1]);
});

test('sidecar --access-log: one record per request with the route pattern, never the token in the query', async () => {
  const records: RequestRecord[] = [];
  const s = await startTest({ token: 'sekret', accessLog: (r) => records.push(r) });
  try {
    await post(`${s.url}`, fullTick(1), 'json', {});
    await postTo(`${s.url}/tick?token=sekret`, fullTick(1));
    await fetch(`${s.url}/health`);
    assert.deepEqual(
      records.map((r) => [r.method, r.route, r.status]),
      [
        ['POST', '/tick', 401],
        ['POST', '/tick', 200],
        ['GET', '/health', 200],
      ],
    );
  } finally {
    await s.close();
  }
});
