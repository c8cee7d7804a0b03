/**
 * Regression: on PostgreSQL a NUL was a 500 wherever it reached the database: a string field
 * holding `"\u0000"` (a server, widget or API key name) and a path parameter holding `%00`
 * (`GET /v1/billing/offline/%00/complete`), since PostgreSQL refuses U+0000 in text. Found by
 * the route-wide malformed-request test once it also ran on PostgreSQL. Both are refused before
 * any store sees them, on SQLite alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from '../../src/http/errors.js';
import { decodeParam } from '../../src/http/guard.js';
import { Fields } from '../../src/http/validate.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';

test('Fields.string refuses a NUL anywhere in a string', () => {
  const f = new Fields({ a: '\u0000', b: 'x\u0000y', c: 'x0y' });
  assert.equal(f.string('a'), undefined);
  assert.equal(f.string('b'), undefined);
  assert.equal(f.string('c'), 'x0y');
  assert.deepEqual(
    f.details.map((d) => d.path),
    ['a', 'b'],
  );
  assert.match(f.details[0]!.message, /U\+0000/);
});

test('a path parameter holding %00 is a 400 bad_request', () => {
  assert.throws(
    () => decodeParam('a%00b'),
    (err: unknown) => err instanceof HttpError && err.status === 400 && err.code === 'bad_request',
  );
  assert.equal(decodeParam('a%20b'), 'a b');
});

test('on PostgreSQL a name holding a NUL is 422 and creates nothing; a %00 path parameter is 400', { timeout: 60_000 }, async () => {
  const s = await startTestServer({ database: { kind: 'postgres', url: await freshDatabase() } });
  try {
    const { token } = await tenantSession(s);
    for (const path of ['/v1/servers', '/v1/widgets', '/v1/api-keys']) {
      const r = await s.call('POST', path, { token, body: { name: 'a\u0000b' } });
      assert.equal(r.status, 422, `${path}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        ['name'],
      );
    }
    assert.deepEqual((await s.call('GET', '/v1/servers', { token })).body, []);
    const offline = await s.call('GET', '/v1/billing/offline/%00/complete', { token });
    assert.equal(offline.status, 400);
    assert.equal(offline.body.error.code, 'bad_request');
  } finally {
    await s.stop();
  }
});
