import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOf, DEFAULT_BUNDLE, evaluateFlag, FLAG_LIMITS, validateBundle, type FlagDefinition } from '../../brain/index.js';

const withFlags = (flags: unknown) => ({ ...DEFAULT_BUNDLE, flags });
const problems = (flags: unknown) => {
  const r = validateBundle(withFlags(flags));
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
};

test('flags are optional; a valid set of every type and condition passes', () => {
  assert.equal(validateBundle(DEFAULT_BUNDLE).ok, true);
  assert.deepEqual(
    problems({
      double_xp: { type: 'boolean', value: false, rules: [{ if: { time: { from: '2026-12-05T00:00:00Z', to: '2026-12-07T00:00:00Z' } }, value: true }] },
      'zombie.density': { type: 'number', value: 1, rules: [{ if: { map: ['chernarus'], players: { min: 40 } }, value: 1.5, variant: 'crowded' }] },
      motd: { type: 'string', value: 'hello', description: 'message of the day', rules: [{ if: { server: ['7'], percentage: 10 }, value: 'beta' }] },
      prices: { type: 'object', value: { ak: 1200 } },
    }),
    [],
  );
});

test('each flag problem is reported with its path, all of them at once', () => {
  const p = problems({
    'bad key!': { type: 'boolean', value: true },
    a: { type: 'boolean', value: 'yes' },
    b: { type: 'color', value: 1 },
    c: { type: 'number', value: 1, rules: [{ if: { players: { min: 5, max: 2 }, percentage: 101, time: { from: 'tomorrow' }, planet: ['x'] }, value: 'two' }] },
    d: { type: 'string', value: 'x', rules: [{ value: 'y' }], extra: 1 },
    e: { type: 'object', value: [] },
  });
  for (const expected of [
    /^flags\.bad key!: a flag key is 1 to 64/,
    /^flags\.a\.value: must be a boolean \(the flag's type\), got string/,
    /^flags\.b\.type: must be one of boolean, string, number, object/,
    /^flags\.c\.rules\[0\]\.if\.players: min \(5\) must not exceed max \(2\)/,
    /^flags\.c\.rules\[0\]\.if\.percentage: must be a number from 0 to 100/,
    /^flags\.c\.rules\[0\]\.if\.time\.from: must be an RFC 3339 instant/,
    /^flags\.c\.rules\[0\]\.if\.planet: is not a known field/,
    /^flags\.c\.rules\[0\]\.value: must be a finite number/,
    /^flags\.d\.rules\[0\]\.if: is required/,
    /^flags\.d\.extra: is not a known field/,
    /^flags\.e\.value: must be an object/,
  ])
    assert.ok(
      p.some((x) => expected.test(x)),
      `${expected} in ${p.join('\n')}`,
    );
});

test('FLAG_LIMITS: flags, rules, list entries, object size and depth are bounded', () => {
  const many = Object.fromEntries(Array.from({ length: FLAG_LIMITS.maxFlags + 1 }, (_, i) => [`f${i}`, { type: 'boolean', value: true }]));
  assert.match(problems(many).join(), /at most 256 flags, got 257/);
  const rules = Array.from({ length: FLAG_LIMITS.maxRules + 1 }, () => ({ if: { map: ['a'] }, value: true }));
  assert.match(problems({ f: { type: 'boolean', value: true, rules } }).join(), /at most 32 rules, got 33/);
  const maps = Array.from({ length: FLAG_LIMITS.maxListEntries + 1 }, (_, i) => `m${i}`);
  assert.match(problems({ f: { type: 'boolean', value: true, rules: [{ if: { map: maps }, value: false }] } }).join(), /at most 64 entries, got 65/);
  assert.match(problems({ f: { type: 'object', value: { s: 'x'.repeat(FLAG_LIMITS.maxObjectBytes) } } }).join(), /at most 8192 bytes as JSON/);
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < FLAG_LIMITS.maxObjectDepth + 1; i++) deep = { d: deep };
  assert.match(problems({ f: { type: 'object', value: deep } }).join(), /nested at most 8 levels/);
  assert.match(problems({ ['k'.repeat(FLAG_LIMITS.maxKey + 1)]: { type: 'boolean', value: true } }).join(), /a flag key is 1 to 64/);
  assert.match(problems({ f: { type: 'string', value: 'x'.repeat(FLAG_LIMITS.maxString + 1) } }).join(), /at most 2000 characters/);
  const big = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, { type: 'object', value: { s: 'x'.repeat(8000) } }]));
  assert.match(problems(big).join(), /flags: must be at most 262144 bytes as JSON/);
});

test('evaluation: first matching rule wins; conditions on server, map, players, a UTC window and a percentage', () => {
  const flag: FlagDefinition = {
    type: 'number',
    value: 1,
    rules: [
      { if: { server: ['7'], map: ['chernarus'] }, value: 2 },
      { if: { players: { min: 10, max: 20 } }, value: 3, variant: 'busy' },
      { if: { time: { from: '2026-12-05T00:00:00Z', to: '2026-12-07T00:00:00Z' } }, value: 4 },
      { if: { percentage: 50 }, value: 5 },
    ],
  };
  const at = Date.parse('2026-12-01T00:00:00Z');
  assert.deepEqual(evaluateFlag('f', flag, { server: '7', map: 'chernarus', targetingKey: 'p' }, at), {
    ok: true,
    value: 2,
    variant: 'rule-1',
    reason: 'TARGETING_MATCH',
  });
  assert.deepEqual(evaluateFlag('f', flag, { server: '8', map: 'chernarus', players: 15, targetingKey: 'p' }, at), {
    ok: true,
    value: 3,
    variant: 'busy',
    reason: 'TARGETING_MATCH',
  });
  assert.equal((evaluateFlag('f', flag, { players: 21, targetingKey: 'p' }, Date.parse('2026-12-06T12:00:00Z')) as { value: number }).value, 4);
  assert.equal((evaluateFlag('f', flag, { players: 21, targetingKey: 'p' }, Date.parse('2026-12-07T00:00:00Z')) as { value: number }).value !== 4, true);
  const none = evaluateFlag('f', flag, {}, at);
  assert.deepEqual(none, { ok: false, errorCode: 'TARGETING_KEY_MISSING', message: 'flag f splits by percentage and the context has no targetingKey' });
  assert.deepEqual(evaluateFlag('g', { type: 'boolean', value: true }, {}, at), { ok: true, value: true, variant: 'default', reason: 'STATIC' });
});

test('percentage buckets are stable, independent between flags, and close to the share asked', () => {
  assert.equal(bucketOf('double_xp', 'player-1'), bucketOf('double_xp', 'player-1'));
  const flag: FlagDefinition = { type: 'boolean', value: false, rules: [{ if: { percentage: 25 }, value: true }] };
  let on = 0;
  for (let i = 0; i < 10_000; i++) if ((evaluateFlag('f', flag, { targetingKey: `p${i}` }, 0) as { value: boolean }).value) on++;
  assert.ok(on > 2300 && on < 2700, String(on));
  let same = 0;
  for (let i = 0; i < 1000; i++) if (bucketOf('a', `p${i}`) < 50 === bucketOf('b', `p${i}`) < 50) same++;
  assert.ok(same > 400 && same < 600, String(same));
});

test('a flag value nested a hundred thousand levels deep is refused as too deep, never a crash', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { d: deep };
  const p = problems({ f: { type: 'object', value: deep } });
  assert.match(p.join(), /^flags: must not nest deeper than 14 levels/);
  assert.match(
    problems({ f: { type: 'object', value: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } } }).join(),
    /flags\.f\.value: must be nested at most 8 levels deep/,
  );
});
