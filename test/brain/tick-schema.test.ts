import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTickRequest, type ValueSpec } from '../../brain/index.js';
import { dotted, edited, fullTick, schemaFields } from '../helpers/tick-schema.js';

// The validator is generated from the tick schema: every field the schema lists is checked,
// copied and located in its problems without a line of the validator naming it.

test('a tick of every schema field is valid and comes back whole, in the schema order', () => {
  const tick = fullTick();
  const parsed = parseTickRequest(tick);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  assert.equal(JSON.stringify(parsed.request), JSON.stringify(tick));
});

/** A value of the wrong type for spec. */
function wrongType(spec: ValueSpec): unknown {
  switch (spec.kind) {
    case 'number':
    case 'integer':
      return 'seven';
    case 'boolean':
      return 1;
    case 'string':
    case 'enum':
      return 7;
    case 'vec3':
    case 'object':
      return [1, 2, 3];
    case 'list':
      return { items: 1 };
  }
}

test('every schema field of the wrong type is refused at its own path, and nothing else is', () => {
  const fields = schemaFields();
  for (const field of fields) {
    const parsed = parseTickRequest(edited(fullTick(), field.path, (parent, key) => (parent[key] = wrongType(field.spec))));
    assert.ok(!parsed.ok, `${dotted(field.path)} of the wrong type is refused`);
    assert.deepEqual(
      parsed.problems.map((p) => p.path),
      [dotted(field.path)],
    );
    assert.match(parsed.problems[0]!.message, /^must be /);
  }
});

test('an extra member anywhere is ignored and never copied', () => {
  for (const field of schemaFields()) {
    const at = [...field.path.slice(0, -1), '__extra__'];
    const parsed = parseTickRequest(edited(fullTick(), at, (parent, key) => (parent[key] = { constructor: 1 })));
    assert.ok(parsed.ok);
    assert.equal(JSON.stringify(parsed.request), JSON.stringify(fullTick()));
  }
});
