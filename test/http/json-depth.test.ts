import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_DEPTH, parseJson } from '../../src/http/codec.js';
import { HttpError } from '../../src/http/errors.js';

const nested = (depth: number, open: string, close: string): string => open.repeat(depth) + close.repeat(depth);

test('a JSON body nested MAX_DEPTH levels is read; one level more is a 400, whether the brackets are few or many', () => {
  assert.deepEqual(parseJson(nested(MAX_DEPTH, '[', ']')), JSON.parse(nested(MAX_DEPTH, '[', ']')));
  for (const body of [nested(MAX_DEPTH + 1, '[', ']'), `{"a":${nested(MAX_DEPTH, '[', ']')}}`, `[${'{},'.repeat(40)}${nested(MAX_DEPTH + 1, '[', ']')}]`]) {
    assert.throws(
      () => parseJson(body),
      (err: unknown) => err instanceof HttpError && err.status === 400 && /nested deeper than 32 levels/.test(err.message),
    );
  }
  // Many brackets in all, none deep: counted bracket by bracket, and read.
  const wide = `[${Array.from({ length: 100 }, () => '{"a":[1]}').join(',')}]`;
  assert.equal((parseJson(wide) as unknown[]).length, 100);
  // Brackets inside strings nest nothing.
  assert.deepEqual(parseJson(`{"s":"${'['.repeat(100)}"}`), { s: '['.repeat(100) });
});
