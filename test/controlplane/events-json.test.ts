import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventsJson } from '../../src/controlplane/rows.js';

// A report's events are stored as JSON text joined by hand when nothing needs escaping; the text
// must be JSON.stringify's to the byte, whatever the kinds, since it is read back as JSON.
test("a report's stored events are JSON.stringify's text to the byte, for every kind of kind", () => {
  const kinds = [
    'spoke',
    'plan',
    'a',
    'x'.repeat(64),
    'with space',
    'quote"d',
    'back\\slash',
    'tab\there',
    'nl\n',
    '\u0000',
    '\u001f',
    '\u007f',
    'é',
    '日本',
    '😀',
    '\ud800',
    '</script>',
    "it's",
    '{"kind":1}',
  ];
  const counts = [0, 1, 6, 1000, 2 ** 31, Number.MAX_SAFE_INTEGER];
  assert.equal(eventsJson([]), JSON.stringify([]));
  for (const kind of kinds) {
    for (const count of counts) {
      const one = [{ kind, count }];
      assert.equal(eventsJson(one), JSON.stringify(one), `${JSON.stringify(kind)} × ${count}`);
      const three = [
        { kind: 'spoke', count: 6 },
        { kind, count },
        { kind: 'snap', count: 1 },
      ];
      assert.equal(eventsJson(three), JSON.stringify(three), `${JSON.stringify(kind)} × ${count} among others`);
    }
  }
  // Every single code unit as a kind of one character.
  for (let c = 0; c < 0x10000; c++) {
    const one = [{ kind: String.fromCharCode(c), count: 1 }];
    assert.equal(eventsJson(one), JSON.stringify(one));
  }
});
