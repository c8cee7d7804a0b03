import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BearerGate } from '../../src/sidecar/auth.js';
import { HttpError } from '../../src/http/errors.js';

/** The token gate judges the whole token, whatever its length: a prefix, an extension or a same-length twin is refused. */
test('BearerGate: only the exact token passes, in each form; every near miss is a 401', () => {
  const token = 'tok_9f2c41';
  const gate = new BearerGate(token);
  gate.check(`Bearer ${token}`);
  gate.check(`bearer\t${token} `);
  gate.check(undefined, token);
  gate.check(undefined, undefined, `a=1&token=${token}`);
  const refused = (f: () => void): void => assert.throws(f, (e: unknown) => e instanceof HttpError && e.status === 401);
  for (const wrong of [
    '',
    't',
    token.slice(0, -1),
    `${token}0`,
    `${token.slice(0, -1)}X`,
    token.toUpperCase(),
    `${token}${token}`,
    'é'.repeat(token.length),
    `${token.slice(0, -1)}é`,
  ]) {
    refused(() => gate.check(`Bearer ${wrong}`));
    if (wrong !== '') refused(() => gate.check(undefined, wrong));
    refused(() => gate.check(undefined, undefined, `token=${encodeURIComponent(wrong)}`));
  }
  // The first form present is the one judged: a wrong header is not rescued by a good query.
  refused(() => gate.check('Bearer nope', undefined, `token=${token}`));
  refused(() => gate.check(undefined, undefined, ''));
  // A token given twice in the query is a 400, whichever copy is right (as a repeated parameter is on every route).
  for (const query of [`token=${token}&token=x`, `token=x&token=${token}`, `token=${token}&token=${token}`])
    assert.throws(
      () => gate.check(undefined, undefined, query),
      (e: unknown) => e instanceof HttpError && e.status === 400,
    );
  assert.throws(() => new BearerGate(''));
});
