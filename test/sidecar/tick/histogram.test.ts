import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatencyHistogram } from '../../../src/sidecar/tick/histogram.js';

test('percentiles are within one bucket (12.5%) of the true value', () => {
  const h = new LatencyHistogram();
  for (let us = 1; us <= 10_000; us++) h.record(us);
  const near = (got: number, want: number): void => assert.ok(got >= want && got <= want * 1.125 + 1, `${got} vs ${want}`);
  near(h.percentile(0.5), 5000);
  near(h.percentile(0.99), 9900);
  near(h.percentile(0.999), 9990);
  assert.equal(h.summary().max_us, 10_000);
  assert.equal(h.count, 10_000);
});

test('small values are exact, huge and negative ones are clamped, reset empties', () => {
  const h = new LatencyHistogram();
  assert.equal(h.percentile(0.5), 0);
  for (const v of [3, 3, 3, 7]) h.record(v);
  assert.equal(h.percentile(0.5), 3);
  assert.equal(h.percentile(1), 7);
  h.record(-5);
  h.record(1e12);
  assert.equal(h.count, 6);
  assert.ok(h.percentile(1) > 1e9);
  h.reset();
  assert.equal(h.count, 0);
  assert.equal(h.summary().p99_us, 0);
});
