import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BEHAVIOURS, OVERLAYS, tableFor } from '../../brain/behaviours/table.js';
import type { Behaviour, Switches, TickCtx } from '../../brain/behaviours/context.js';
import { NEUTRAL_FRAMING } from '../../brain/goals.js';

function switches(human: boolean, goals: boolean, emotes: boolean): Switches {
  return { human, goals, emotes, knowledge: true, squads: true, memory: true, emotions: true, flavor: true, allowNames: false, framing: NEUTRAL_FRAMING };
}

const COMBOS = [false, true].flatMap((h) => [false, true].flatMap((g) => [false, true].map((e) => switches(h, g, e))));

test('each policy set has one table, built once, of the behaviours whose `when` it meets, in the static order', () => {
  for (const sw of COMBOS) {
    const t = tableFor(sw);
    assert.equal(tableFor({ ...sw }), t, 'the same table object for the same switches');
    for (const b of [...t.decide, ...t.overlays]) {
      for (const [k, v] of Object.entries(b.when)) assert.equal(sw[k as 'human' | 'goals' | 'emotes'], v, `${b.name} is in a table it does not belong to`);
    }
    const order = (list: readonly unknown[], all: readonly unknown[]) => list.map((b) => all.indexOf(b));
    assert.deepEqual(
      order(t.decide, BEHAVIOURS),
      [...order(t.decide, BEHAVIOURS)].sort((x, y) => x - y),
    );
    assert.deepEqual(
      order(t.overlays, OVERLAYS),
      [...order(t.overlays, OVERLAYS)].sort((x, y) => x - y),
    );
    // One variant of a rule per table: a name appears once.
    const names = t.decide.map((b) => b.name);
    assert.equal(new Set(names).size, names.length, `duplicate rule in ${names.join(',')}`);
    // The last rule always applies, so every tick is decided.
    const last = t.decide.at(-1)!;
    assert.ok(last.name === 'goal' || last.name === 'idle', last.name);
  }
});

test('the human-factors table has the human rules and the reactive one has none of them', () => {
  const human = tableFor(switches(true, true, true)).decide.map((b) => b.name);
  const plain = tableFor(switches(false, false, false)).decide.map((b) => b.name);
  for (const n of ['logoff', 'away', 'flight_goes_on', 'wind_down', 'go_away']) {
    assert.ok(human.includes(n), n);
    assert.ok(!plain.includes(n), n);
  }
  assert.deepEqual(plain, ['dead', 'flee', 'engage', 'investigate', 'patrol', 'regroup', 'idle']);
});

test('the dispatch calls, for every index, the behaviour at that index of the table', async () => {
  const { decide, overlay } = await import('../../brain/behaviours/dispatch.js');
  const check = (list: readonly Behaviour[], run: (ids: Uint8Array) => void): void => {
    list.forEach((b, k) => {
      const applies = b.applies;
      const act = b.act;
      const calls: string[] = [];
      const entry = b as { applies: Behaviour['applies']; act: Behaviour['act'] };
      entry.applies = () => {
        calls.push('applies');
        return true;
      };
      entry.act = () => {
        calls.push('act');
      };
      try {
        run(Uint8Array.of(k));
      } finally {
        entry.applies = applies;
        entry.act = act;
      }
      assert.deepEqual(calls, ['applies', 'act'], `${b.name} at ${k}`);
    });
  };
  const ctx = {} as TickCtx;
  check(BEHAVIOURS, (ids) => assert.equal(decide(ctx, [], ids), ids[0]));
  check(OVERLAYS, (ids) => overlay(ctx, [], ids));
});
