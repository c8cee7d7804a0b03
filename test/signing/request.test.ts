import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { canonicalString, signRequest, signature, verifyRequest } from '../../src/signing/request.js';
import { signingVectors } from '../helpers/signing-vectors.js';

const KEY = 'bsk_example_key_do_not_use';

test('worked example of docs/controlplane.md (request signing): canonical string and signature', () => {
  const canonical = canonicalString({ method: 'GET', target: '/v1/config?server=7', timestamp: 1767225600 });
  assert.equal(canonical, 'GET\n/v1/config?server=7\n1767225600\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  const sig = signature(KEY, { method: 'GET', target: '/v1/config?server=7', timestamp: 1767225600 });
  assert.equal(sig, createHmac('sha256', KEY).update(canonical).digest('hex'));
  assert.equal(sig, '296b33fe257d6dd96cccc443a7a289eb506e60760b5a2fec350ca477a4cb0a49');
});

test('a POST signs the sha256 of its body', () => {
  const body = '{"serverId":"7"}';
  const canonical = canonicalString({ method: 'post', target: '/v1/telemetry', timestamp: 5, body });
  assert.equal(canonical, `POST\n/v1/telemetry\n5\n${createHash('sha256').update(body).digest('hex')}`);
});

test('verifyRequest: ok, wrong key, tampered parts, window edges', () => {
  const now = 1_767_225_600_000;
  const h = signRequest(KEY, { method: 'POST', target: '/v1/telemetry', body: 'x' }, now);
  const base = { method: 'POST', target: '/v1/telemetry', body: 'x', timestamp: h['x-service-timestamp'], signature: h['x-service-signature'] };
  assert.deepEqual(verifyRequest(KEY, base, now), { ok: true, timestamp: now / 1000 });
  assert.equal(verifyRequest('bsk_other', base, now).ok, false);
  assert.deepEqual(verifyRequest(KEY, { ...base, body: 'y' }, now), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(verifyRequest(KEY, { ...base, target: '/v1/telemetry/x' }, now), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(verifyRequest(KEY, { ...base, method: 'PUT' }, now), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(verifyRequest(KEY, { ...base, signature: undefined }, now), { ok: false, reason: 'missing_headers' });
  assert.deepEqual(verifyRequest(KEY, { ...base, timestamp: '12a' }, now), { ok: false, reason: 'bad_timestamp' });
  assert.equal(verifyRequest(KEY, base, now + 300_000).ok, true);
  assert.deepEqual(verifyRequest(KEY, base, now + 301_000), { ok: false, reason: 'stale_timestamp' });
  assert.equal(verifyRequest(KEY, base, now - 300_000).ok, true);
  assert.deepEqual(verifyRequest(KEY, base, now - 301_000), { ok: false, reason: 'stale_timestamp' });
  assert.equal(verifyRequest(KEY, { ...base, signature: base.signature!.toUpperCase() }, now).ok, true);
});

test('worked example of docs/controlplane.md (request signing): a telemetry POST', () => {
  const body =
    '{"serverId":"7","ts":"2026-01-01T00:00:00Z","botCount":3,"playersOnline":5,"linesSpoken":2,"spendUsd":0.01,"events":[{"kind":"spoke","count":2}]}';
  const parts = { method: 'POST', target: '/v1/telemetry', timestamp: 1767225600, body };
  assert.equal(canonicalString(parts), 'POST\n/v1/telemetry\n1767225600\nb39f18d0a5a4bc52f49518351dfe588894f03897e61c0e9935ce41386ffe1f67');
  assert.equal(signature(KEY, parts), 'c429c6cfa9858b13fe7673e2f2e28da7c7d87628dce4e4fa4ca6b33628952d7f');
});

for (const v of signingVectors()) {
  test(`signing test vector: ${v.name}`, () => {
    const parts = { method: v.method, target: v.target, timestamp: v.timestamp, body: v.body };
    assert.equal(canonicalString(parts), v.canonical);
    assert.equal(signature(v.key, parts), v.signature);
    const headers = { timestamp: String(v.timestamp), signature: v.signature };
    assert.deepEqual(verifyRequest(v.key, { ...parts, ...headers }, v.timestamp * 1000), { ok: true, timestamp: v.timestamp });
  });
}
