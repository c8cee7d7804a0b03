/**
 * Lengths were counted in UTF-16 units: a name of 150 emoji (150 characters) was refused as
 * "at most 200 characters, got 300", and a property titled by its address was cut to 200 units,
 * inside an emoji when one straddled the cut, so its creation answer held a lone surrogate and
 * the stored title read back as U+FFFD. Lengths are characters (code points) now, and a cut
 * never splits a pair.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charCount, firstChars } from '../../src/http/validate.js';
import { tenantSession } from '../helpers/embedded.js';
import { apiKey, startVideoServer } from '../video/helpers.js';

const EMOJI = '\u{1F600}';

test('charCount and firstChars count and cut by code point', () => {
  assert.equal(charCount(''), 0);
  assert.equal(charCount(`a${EMOJI}b`), 3);
  assert.equal(charCount(EMOJI.repeat(200)), 200);
  assert.equal(firstChars(`ab${EMOJI}c`, 3), `ab${EMOJI}`);
  assert.equal(firstChars(`ab${EMOJI}c`, 2), 'ab');
  assert.equal(firstChars('abc', 5), 'abc');
  assert.equal(firstChars(EMOJI.repeat(300), 200), EMOJI.repeat(200));
});

test('names of 200 emoji are 200 characters; 201 are refused as 201; an address-made title never ends in half an emoji', async () => {
  const s = await startVideoServer();
  try {
    const { token } = await tenantSession(s, 'enterprise');
    const ok = await s.call('POST', '/v1/servers', { token, body: { name: EMOJI.repeat(200) } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.name, EMOJI.repeat(200));
    const over = await s.call('POST', '/v1/widgets', { token, body: { name: EMOJI.repeat(201) } });
    assert.equal(over.status, 422);
    assert.equal(over.body.error.details[0].message, 'must be at most 200 characters, got 201');

    const { key } = await apiKey(s);
    const address = `${'a'.repeat(199)}${EMOJI}tail`;
    const p = await s.call('POST', '/v1/properties', { token: key, body: { address } });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    assert.equal(p.body.title, `${'a'.repeat(199)}${EMOJI}`, 'the first 200 characters, the emoji whole');
    assert.equal((await s.call('GET', `/v1/properties/${p.body.id}`, { token: key })).body.title, p.body.title, 'stored as answered');
  } finally {
    await s.stop();
  }
});
