import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etagMatches, parseRange } from '../../src/video/range.js';

test('Range: one range served, suffix and open ranges clamped, several or malformed ranges get the whole file', () => {
  assert.deepEqual(parseRange(undefined, 100), { kind: 'whole' });
  assert.deepEqual(parseRange('bytes=0-9', 100), { kind: 'partial', start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-200', 100), { kind: 'partial', start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=95-', 100), { kind: 'partial', start: 95, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { kind: 'partial', start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-500', 100), { kind: 'partial', start: 0, end: 99 });
  assert.deepEqual(parseRange('bytes=100-', 100), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRange('bytes=-0', 100), { kind: 'unsatisfiable' });
  for (const h of ['bytes=0-1,5-6', 'items=0-1', 'bytes=5-2', 'bytes=-', 'garbage']) assert.deepEqual(parseRange(h, 100), { kind: 'whole' }, h);
});

test('If-None-Match: exact, weak, listed and * match; others do not', () => {
  assert.equal(etagMatches('"abc"', '"abc"'), true);
  assert.equal(etagMatches('W/"abc"', '"abc"'), true);
  assert.equal(etagMatches('"x", "abc"', '"abc"'), true);
  assert.equal(etagMatches('*', '"abc"'), true);
  assert.equal(etagMatches('"abcd"', '"abc"'), false);
  assert.equal(etagMatches(undefined, '"abc"'), false);
});
