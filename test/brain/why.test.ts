import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, type TickResponse, type Why } from '../../brain/index.js';
import { BEHAVIOURS, OVERLAYS } from '../../brain/behaviours/table.js';
import { MAX_WEIGHED, WHY_MAX_BYTES, WhyRecorder } from '../../brain/behaviours/why.js';
import { GOALS, MODES } from '../../brain/modes.js';
import { workload } from '../../bench/brain-micro.js';
import { allOff, bundle, hostile, kinds, req, self } from './sim.js';

// `why`: the explanation a tick asks for (Brain.tick's `explain`), true to the decision.

function whyOf(r: TickResponse): Why {
  assert.ok(r.why, `no why in ${JSON.stringify(r)}`);
  return r.why;
}

const pack = [hostile(1, { x: 30, y: 8, z: 0 }), hostile(2, { x: 32, y: 8, z: 0 }), hostile(3, { x: 34, y: 8, z: 0 })];
const timid = { traits: { neuroticism: 0.6, extraversion: 0.1, agreeableness: 0.6 } };

test('flee: outnumbered and hurt, a timid character runs, and why shows flee outscoring engage', () => {
  for (const b of [allOff(), bundle()]) {
    const brain = new Brain(b);
    const r = brain.tick(req(1, 0, self(undefined, { health: 50 }), { targets: pack }, timid), true);
    assert.equal(r.intents[0]!.kind, 'Flee');
    const why = whyOf(r);
    assert.equal(why.mode, 'fleeing');
    assert.equal(why.rule.split(' + ')[0], 'flee');
    assert.deepEqual(
      why.options.map((o) => o.name),
      ['flee', 'engage'],
    );
    assert.ok(why.options[0]!.score > why.options[1]!.score);
  }
});

test('engage: one hostile at full health, engage outscores flee and decides', () => {
  const brain = new Brain(bundle());
  const why = whyOf(brain.tick(req(2, 0, self(), { targets: [pack[0]!] }), true));
  assert.equal(why.mode, 'engaging');
  assert.equal(why.rule.split(' + ')[0], 'engage');
  assert.deepEqual(
    why.options.map((o) => o.name),
    ['engage', 'flee'],
  );
  assert.ok(why.options[0]!.score > why.options[1]!.score);
});

test('an unarmed character flees without weighing a fight: the options are empty', () => {
  const brain = new Brain(allOff());
  const why = whyOf(brain.tick(req(4, 0, self(undefined, { has_weapon: false }), { targets: [pack[0]!] }), true));
  assert.deepEqual(why, { mode: 'fleeing', goal: 'none', options: [], rule: 'flee' });
});

test('investigate: a wounded character goes to where a hostile went out of sight', () => {
  for (const b of [allOff(), bundle()]) {
    const brain = new Brain(b);
    const h = hostile(9, { x: 40, y: 8, z: 0 });
    brain.tick(req(1, 0, self(undefined, { health: 50 }), { targets: [h] }), true);
    const r = brain.tick(req(1, 0.5, self(undefined, { health: 50 }), { targets: [{ ...h, visible: false }] }), true);
    assert.ok(kinds(r).includes('Investigate'));
    const why = whyOf(r);
    assert.equal(why.mode, 'investigating');
    assert.equal(why.rule.split(' + ')[0], 'investigate');
    assert.deepEqual(why.options, []);
  }
});

test('idle: with nothing to do and no goals, the idle rule decides and nothing is scored', () => {
  const brain = new Brain(allOff());
  assert.deepEqual(whyOf(brain.tick(req(3, 0, self()), true)), { mode: 'idle', goal: 'none', options: [], rule: 'idle' });
});

test('goals: a plan lists its three best goals best first, the chosen one first; between plans nothing is scored', () => {
  const brain = new Brain(bundle());
  const why = whyOf(brain.tick(req(3, 0, self()), true));
  assert.equal(why.rule.split(' + ')[0], 'goal');
  assert.equal(why.options.length, 3);
  assert.equal(why.options[0]!.name, why.goal);
  for (const o of why.options) assert.ok((GOALS as readonly string[]).includes(o.name), o.name);
  assert.ok(why.options[0]!.score >= why.options[1]!.score && why.options[1]!.score >= why.options[2]!.score);
  const next = whyOf(brain.tick(req(3, 1, self()), true));
  assert.equal(next.goal, why.goal);
  assert.deepEqual(next.options, []);
});

test('the rule names the overlays that added an intent after the deciding behaviour', () => {
  const brain = new Brain(bundle());
  let seen = false;
  for (const r of workload(30, 40).map((q) => brain.tick(q, true))) {
    const [decider, ...overlays] = whyOf(r).rule.split(' + ');
    assert.ok(
      BEHAVIOURS.some((b) => b.name === decider),
      decider,
    );
    for (const o of overlays)
      assert.ok(
        OVERLAYS.some((b) => b.name === o),
        o,
      );
    if (overlays.includes('look')) {
      assert.ok(kinds(r).includes('Face'), JSON.stringify(r));
      seen = true;
    }
  }
  assert.ok(seen, 'no tick named the look overlay');
});

test('explaining changes no decision: the same traffic gives the same replies and the same state, why aside', () => {
  for (const b of [bundle(), allOff()]) {
    const plain = new Brain(b);
    const explained = new Brain(b);
    const requests = workload(40, 60);
    for (let i = 0; i < requests.length; i++) {
      const off = plain.tick(requests[i]!);
      // Every other tick explained: turning it on and off mid-run must not matter either.
      const on = explained.tick(requests[i]!, i % 2 === 0);
      assert.equal('why' in off, false);
      assert.equal('why' in on, i % 2 === 0);
      const { why: _, ...rest } = on;
      assert.equal(JSON.stringify(rest), JSON.stringify(off), `tick ${i}`);
    }
    assert.deepEqual(explained.exportState(), plain.exportState());
    assert.deepEqual(explained.drainEvents(), plain.drainEvents());
  }
});

test('every why names a known mode and goal, at most three options best first, within WHY_MAX_BYTES', () => {
  const brain = new Brain(bundle());
  for (const q of workload(40, 60)) {
    const why = whyOf(brain.tick(q, true));
    assert.ok((MODES as readonly string[]).includes(why.mode), why.mode);
    assert.ok((GOALS as readonly string[]).includes(why.goal), why.goal);
    assert.ok(why.options.length <= 3);
    for (let k = 1; k < why.options.length; k++) assert.ok(why.options[k - 1]!.score >= why.options[k]!.score);
    assert.ok(`,"why":${JSON.stringify(why)}`.length <= WHY_MAX_BYTES);
  }
  // The longest explanation there can be, with scores far beyond the brain's.
  const longest = (xs: readonly string[]): string => xs.reduce((a, b) => (b.length > a.length ? b : a), '');
  const option = { name: longest([...GOALS, 'engage', 'flee']), score: -123456.789 };
  const worst: Why = {
    mode: longest(MODES),
    goal: longest(GOALS),
    options: [option, option, option],
    rule: [longest(BEHAVIOURS.map((b) => b.name)), ...OVERLAYS.map((o) => o.name)].join(' + '),
  };
  assert.ok(Buffer.byteLength(`,"why":${JSON.stringify(worst)}`) <= WHY_MAX_BYTES);
});

test('the recorder: best three first, ties kept in the order weighed, a re-weighed option keeps its later score, at most MAX_WEIGHED', () => {
  const w = new WhyRecorder();
  w.begin();
  assert.deepEqual(w.top(), []);
  w.weigh('a', 0.5);
  w.weigh('b', 0.9);
  w.weigh('c', 0.5);
  w.weigh('d', 0.1);
  assert.deepEqual(w.top(), [
    { name: 'b', score: 0.9 },
    { name: 'a', score: 0.5 },
    { name: 'c', score: 0.5 },
  ]);
  w.weigh('d', 2);
  assert.equal(w.top()[0]!.name, 'd');
  w.begin();
  w.weigh('x', -0.0001);
  assert.ok(Object.is(w.top()[0]!.score, 0), 'a score rounding to -0 is written 0');
  w.begin();
  for (let i = 0; i < MAX_WEIGHED + 4; i++) w.weigh(`o${i}`, i);
  // Options past the cap are not kept: the best kept is the last one within it.
  assert.equal(w.top()[0]!.name, `o${MAX_WEIGHED - 1}`);
});
