import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError, MAX_ECHOED_ID_CHARS, quoteId } from '../../src/http/errors.js';
import { idParam } from '../../src/http/validate.js';

function notFoundMessage(raw: string): string {
  try {
    idParam(raw, 'property');
  } catch (e) {
    assert.ok(e instanceof HttpError);
    assert.equal(e.code, 'not_found');
    return e.message;
  }
  assert.fail(`${raw} was accepted`);
}

// The audit: /v1/properties/007 answered as property 7, and a 10,000-character id came back
// whole in the 404 message.
test('an id with leading zeros names no resource (not an alias of the id without them)', () => {
  assert.equal(idParam('7'), 7);
  assert.equal(idParam('70'), 70);
  for (const raw of ['007', '0', '00', '01']) assert.match(notFoundMessage(raw), /^No property with id /, raw);
});

test('a 404 echoes at most MAX_ECHOED_ID_CHARS characters of the id, whole code points, then "…"', () => {
  const long = 'x'.repeat(10_000);
  assert.equal(notFoundMessage(long), `No property with id "${'x'.repeat(MAX_ECHOED_ID_CHARS)}…".`);
  assert.equal(quoteId('a'.repeat(MAX_ECHOED_ID_CHARS)), JSON.stringify('a'.repeat(MAX_ECHOED_ID_CHARS)));
  const emoji = quoteId('😀'.repeat(MAX_ECHOED_ID_CHARS + 1));
  assert.equal(emoji, JSON.stringify(`${'😀'.repeat(MAX_ECHOED_ID_CHARS)}…`));
  assert.equal(quoteId(undefined), '""');
});
