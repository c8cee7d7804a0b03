import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { keyVerifier } from '../../src/signing/key-verifier.js';
import { canonicalString, signature } from '../../src/signing/request.js';
import { seededRandom } from '../../src/random.js';

const TS = 1767225600;

/** What the replay guard keys on: the first 52 bits of the signature. */
const slotOf = (hex: string): number => parseInt(hex.slice(0, 13), 16);

const CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~%&=/?';
const WIDE = ['é', 'ß', '€', '日', '😀', '\ud800', '\u0080', '\u00ff'];

function randomString(next: () => number, length: number, wide: boolean): string {
  let s = '';
  for (let i = 0; i < length; i++) s += wide && next() < 0.1 ? WIDE[Math.floor(next() * WIDE.length)]! : CHARS[Math.floor(next() * CHARS.length)]!;
  return s;
}

test('keyVerifier agrees with createHmac over the canonical string (the docs/controlplane.md example, GET and POST)', () => {
  const key = 'bsk_test_key';
  const get = { method: 'GET', target: '/v1/config?server=7', timestamp: TS };
  const sig = createHmac('sha256', key).update(canonicalString(get)).digest('hex');
  assert.equal(keyVerifier(key)('GET', get.target, TS, undefined, sig), slotOf(sig));
  const body = Buffer.from(
    '{"serverId":"7","ts":"2026-01-01T00:00:00Z","botCount":3,"playersOnline":5,"linesSpoken":2,"spendUsd":0.01,"events":[{"kind":"spoke","count":2}]}',
  );
  const post = signature(key, { method: 'POST', target: '/v1/telemetry', timestamp: TS, body });
  assert.equal(keyVerifier(key)('POST', '/v1/telemetry', TS, body, post), slotOf(post));
  assert.equal(keyVerifier(key)('POST', '/v1/telemetry', TS, Buffer.from('{}'), post), -1, 'another body');
});

test('keyVerifier: random keys and requests of every length around the SHA-256 block boundaries match signature()', () => {
  const next = seededRandom(4231);
  // The canonical string is the target plus 80 bytes for a GET, so targets of 0-200 characters
  // put the inner message (64-byte pad + canonical) on every offset of its last block,
  // 55/56 (where the length no longer fits) and 63/64 included; keys of 0-150 bytes cross the
  // 64-byte point where RFC 2104 hashes the key first.
  for (let i = 0; i < 3000; i++) {
    const wide = i % 3 === 0;
    const key = randomString(next, i % 151, wide && i % 2 === 0);
    const target = '/' + randomString(next, i % 201, wide);
    const body = i % 4 === 0 ? Buffer.from(randomString(next, Math.floor(next() * 300), wide)) : undefined;
    const method = body ? 'POST' : 'GET';
    const timestamp = Math.floor(next() * 1e12);
    const sig = signature(key, { method, target, timestamp, ...(body ? { body } : {}) });
    const verify = keyVerifier(key);
    assert.equal(verify(method, target, timestamp, body, sig), slotOf(sig), `key ${JSON.stringify(key)} target ${JSON.stringify(target)}`);
    assert.equal(verify(method, target, timestamp, body, sig.toUpperCase()), slotOf(sig), 'upper-case hex');
    assert.equal(verify(method, target, timestamp + 1, body, sig), -1, 'another timestamp');
    assert.equal(verify(method, target + 'x', timestamp, body, sig), -1, 'another target');
  }
});

test('keyVerifier refuses every signature that is not exactly the 64 hex digits of the MAC', () => {
  const key = 'bsk_' + 'k'.repeat(43);
  const target = '/v1/config?server=7';
  const sig = signature(key, { method: 'GET', target, timestamp: TS });
  const verify = keyVerifier(key);
  assert.ok(verify('GET', target, TS, undefined, sig) >= 0);
  for (let i = 0; i < 64; i++) {
    const flipped = sig.slice(0, i) + (sig[i] === '0' ? '1' : '0') + sig.slice(i + 1);
    assert.equal(verify('GET', target, TS, undefined, flipped), -1, `digit ${i} changed`);
    // 0x10-0x19 fold onto '0'-'9' under the case-insensitive compare; they must not pass.
    const code = sig.charCodeAt(i);
    if (code <= 0x39)
      assert.equal(
        verify('GET', target, TS, undefined, sig.slice(0, i) + String.fromCharCode(code - 0x20) + sig.slice(i + 1)),
        -1,
        `control character at ${i}`,
      );
  }
  assert.equal(verify('GET', target, TS, undefined, sig.slice(0, 63)), -1, 'too short');
  assert.equal(verify('GET', target, TS, undefined, sig + '0'), -1, 'too long');
  assert.equal(verify('GET', target, TS, undefined, ''), -1, 'empty');
  assert.equal(verify('GET', target, TS, undefined, 'g'.repeat(64)), -1, 'not hex');
  assert.equal(keyVerifier('bsk_other')('GET', target, TS, undefined, sig), -1, 'another key');
});
