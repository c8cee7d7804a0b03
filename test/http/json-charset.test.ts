import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBody, encodingOf } from '../../src/http/codec.js';
import { HttpError } from '../../src/http/errors.js';

// The audit: `application/json; charset=utf-16` bodies were read as UTF-8.
test('JSON is read only as UTF-8, by any of its labels (utf-8, utf8, …): a charset naming anything else is a 415', () => {
  for (const ct of [
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'Application/JSON ; Charset = Utf-8',
    'application/problem+json; charset=utf-8',
    // The other labels of UTF-8 (WHATWG Encoding Standard): `utf8` is what many clients send.
    'application/json; charset=utf8',
    'application/json;charset=UTF8',
    'application/json; charset="unicode-1-1-utf-8"',
  ]) {
    assert.equal(encodingOf(ct), 'json', ct);
    assert.deepEqual(decodeBody(Buffer.from('{"a":1}'), ct).value, { a: 1 }, ct);
  }
  for (const ct of [
    'application/json; charset=utf-16',
    'application/json; charset="UTF-16LE"',
    'application/json; charset=latin1',
    'application/json; charset=utf_8',
    'application/json; charset=us-ascii',
    'application/json; charset=',
    'application/json; charset=utf-8; charset=utf-16',
  ]) {
    assert.equal(encodingOf(ct), null, ct);
    assert.throws(
      () => decodeBody(Buffer.from('{"a":1}', 'utf16le'), ct),
      (e: unknown) => e instanceof HttpError && e.code === 'unsupported_media_type' && e.status === 415,
      ct,
    );
  }
});
