import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encode } from '@msgpack/msgpack';
import type { TickRequest } from '../../../brain/index.js';
import { HttpError } from '../../../src/http/errors.js';
import { exactTick } from '../../../src/sidecar/tick/tick-exact.js';
import { readTickJson } from '../../../src/sidecar/tick/tick-json.js';
import { readTickMsgpack } from '../../../src/sidecar/tick/tick-msgpack.js';
import { dotted, edited, fullTick, outOfRange, schemaFields } from '../../helpers/tick-schema.js';

// The guard between the tick schema and the fast readers. The ticks are generated from the
// schema, so a field added to it is sent here at once: until the fast reader reads it, the
// reader leaves the tick to the exact path and these tests fail, instead of the fast path
// dropping the field while every hand-written test still passes.

const ENCODINGS = [
  { name: 'JSON', encoding: 'json', encode: (v: unknown) => Buffer.from(JSON.stringify(v)), fast: readTickJson },
  { name: 'MessagePack', encoding: 'msgpack', encode: (v: unknown) => Buffer.from(encode(v)), fast: readTickMsgpack },
] as const;

function exactOrError(body: Buffer, encoding: 'json' | 'msgpack'): TickRequest | HttpError {
  try {
    return exactTick(body, encoding);
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
}

for (const { name, encoding, encode: enc, fast } of ENCODINGS) {
  test(`${name}: a tick holding every schema field takes the fast path and gives exactly what the exact path gives, field for field`, () => {
    const tick = fullTick();
    const body = enc(tick);
    const slow = exactOrError(body, encoding);
    assert.ok(!(slow instanceof HttpError), `the exact path refuses the generated tick: ${slow instanceof HttpError ? slow.message : ''}`);
    assert.equal(JSON.stringify(slow), JSON.stringify(tick), 'the validator keeps every schema field, in the schema order');
    const quick = fast(body);
    assert.notEqual(
      quick,
      null,
      `the fast ${name} reader left a tick of every schema field to the exact path: some field of brain/tick-schema.ts has no case in src/sidecar/tick/tick-reader.ts`,
    );
    assert.deepStrictEqual(quick, slow);
    assert.equal(JSON.stringify(quick), JSON.stringify(slow), 'same fields in the same order');
  });

  test(`${name}: every schema field, left out, is refused by both paths when required and dropped by both when optional`, () => {
    const fields = schemaFields();
    assert.ok(fields.length >= 40, `${fields.length} fields: the walk sees the schema`);
    for (const field of fields) {
      const tick = edited(fullTick(), field.path, (parent, key) => delete parent[key]);
      const body = enc(tick);
      const slow = exactOrError(body, encoding);
      const quick = fast(body);
      if (field.required) {
        assert.ok(slow instanceof HttpError, `${dotted(field.path)} missing is refused`);
        assert.equal(slow.details?.[0]?.path, dotted(field.path));
        assert.equal(quick, null, `${dotted(field.path)} missing: the fast path leaves it to the exact path`);
      } else {
        assert.ok(!(slow instanceof HttpError), `${dotted(field.path)} is optional`);
        // A request without a profile gets the empty one.
        const expected = 'profile' in (tick as object) ? tick : { ...(tick as object), profile: {} };
        assert.equal(JSON.stringify(slow), JSON.stringify(expected));
        assert.notEqual(quick, null, `${dotted(field.path)} left out: still the fast path`);
        assert.equal(JSON.stringify(quick), JSON.stringify(slow));
      }
    }
  });

  test(`${name}: every schema field out of its range or cap is refused by the exact path and never accepted by the fast one`, () => {
    let checked = 0;
    for (const field of schemaFields()) {
      const bad = outOfRange(field.spec);
      if (bad === null) continue;
      checked++;
      const body = enc(edited(fullTick(), field.path, (parent, key) => (parent[key] = bad)));
      const slow = exactOrError(body, encoding);
      assert.ok(slow instanceof HttpError, `${dotted(field.path)} = ${JSON.stringify(bad).slice(0, 40)} is refused`);
      assert.equal(slow.details?.[0]?.path, dotted(field.path));
      assert.equal(fast(body), null, `${dotted(field.path)} out of range: the fast path leaves it to the exact path`);
    }
    assert.ok(checked >= 20, `${checked} fields with a range or cap`);
  });
}
