import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, LineSplitter, PluginError, encodeMessage, parseChildMessage, parseParentMessage } from '../../plugins/protocol.js';

test('lines split across chunks are joined; a newline inside a string never splits a message', () => {
  const lines: string[] = [];
  const s = new LineSplitter((l) => lines.push(l));
  const a = encodeMessage({ type: 'response', id: 1, result: { text: 'two\nlines' } });
  const b = encodeMessage({ type: 'log', level: 'info', message: 'hi' });
  const all = a + b;
  for (let i = 0; i < all.length; i += 7) s.push(all.slice(i, i + 7));
  assert.equal(lines.length, 2);
  assert.deepEqual(parseChildMessage(lines[0]!), { type: 'response', id: 1, result: { text: 'two\nlines' } });
  assert.equal(parseChildMessage(lines[1]!)?.type, 'log');
});

test('malformed or unknown messages parse to null', () => {
  for (const bad of ['not json', '[]', '{"type":"response"}', '{"type":"error","id":1}', '{"type":"other"}']) assert.equal(parseChildMessage(bad), null, bad);
  assert.equal(parseParentMessage('{"type":"request","id":"1","method":"x"}'), null);
  assert.deepEqual(parseParentMessage('{"type":"shutdown","extra":1}'), { type: 'shutdown' });
});

function apiError(status: number | undefined, headers: Record<string, string> = {}): unknown {
  return Object.assign(new Error(`status ${status}`), { status, headers: new Headers(headers) });
}

test('back-off honours Retry-After, doubles without it, and waits longest on misconfiguration', () => {
  let now = 0;
  const b = new Backoff('the server', { baseMs: 1000, maxMs: 60_000, now: () => now });
  assert.equal(b.failed(apiError(429, { 'retry-after': '3' })).retryAfterMs, 3000);
  assert.throws(
    () => b.check(),
    (e: PluginError) => e.code === 'unavailable' && e.retryAfterMs === 3000,
  );
  now += 3000;
  b.check();
  assert.equal(b.failed(apiError(503, { 'retry-after-ms': '250' })).retryAfterMs, 250);
  assert.equal(b.failed(apiError(500)).retryAfterMs, 4000, 'third failure in a row, no hint: 1 s doubled twice');
  assert.equal(b.failed(apiError(undefined)).retryAfterMs, 8000, 'a network error backs off the same way');
  b.succeeded();
  b.check();
  assert.equal(b.failed(apiError(401)).retryAfterMs, 60_000);
  const refused = b.failed(apiError(400));
  assert.equal(refused.code, 'bad_request');
  const dated = new Backoff('x', { now: () => Date.now() }).failed(apiError(429, { 'retry-after': new Date(Date.now() + 5000).toUTCString() }));
  assert.ok(dated.retryAfterMs! > 3000 && dated.retryAfterMs! <= 5000, String(dated.retryAfterMs));
});
