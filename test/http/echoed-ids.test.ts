import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError, MAX_ECHOED_ID_CHARS, MAX_ECHOED_PATH_CHARS, quoteId, quoteValue } from '../../src/http/errors.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
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

test('the 404 and 405 of an unknown route echo at most MAX_ECHOED_PATH_CHARS characters of the path', async () => {
  const s = await startTestServer();
  try {
    const long = `/v1/properties/${'9'.repeat(6000)}`;
    const cut = `${long.slice(0, MAX_ECHOED_PATH_CHARS)}…`;
    const put = await s.call('PUT', long);
    assert.equal(put.status, 405);
    assert.equal(put.body.error.message, `PUT is not allowed on ${cut}.`);
    const none = await s.call('GET', `/v1/nope/${'😀'.repeat(300)}`);
    assert.equal(none.status, 404);
    assert.equal(none.body.error.message, `No route for GET ${`/v1/nope/${'%F0%9F%98%80'.repeat(300)}`.slice(0, MAX_ECHOED_PATH_CHARS)}….`);
    assert.equal((await s.call('PUT', '/v1/properties/7')).body.error.message, 'PUT is not allowed on /v1/properties/7.');
  } finally {
    await s.stop();
  }
});

test('a query value or body field quoted in an error is cut like an id: a long one is not sent back whole, nor once per detail', async () => {
  assert.equal(quoteValue(7), '7');
  assert.equal(quoteValue({ a: 'x'.repeat(100) }), `${JSON.stringify({ a: 'x'.repeat(100) }).slice(0, MAX_ECHOED_ID_CHARS)}…`);
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const cut = JSON.stringify(`${'9'.repeat(MAX_ECHOED_ID_CHARS)}…`);
    const limit = await s.call('GET', `/v1/properties?limit=${'9'.repeat(5000)}`, { token });
    assert.equal(limit.status, 400);
    assert.ok(limit.body.error.message.endsWith(`got ${cut}.`), limit.body.error.message);
    const events = Array.from({ length: 20 }, () => 'e'.repeat(20_000));
    const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    assert.equal(widget.status, 201);
    const endpoint = await s.call('POST', `/v1/widgets/${widget.body.id}/webhooks`, { token, body: { url: 'https://example.com/hook', events } });
    assert.equal(endpoint.status, 422);
    const text = JSON.stringify(endpoint.body);
    assert.ok(text.length < 10_000, `the 422 is ${text.length} characters for a body of 400,000`);
    assert.ok(endpoint.body.error.details.some((d: { message: string }) => d.message.endsWith(`got ${JSON.stringify(`${'e'.repeat(MAX_ECHOED_ID_CHARS)}…`)}`)));
  } finally {
    await s.stop();
  }
});
