import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { allOff, bundle, find, follow, hostile, kinds, req, self } from './sim.js';

// One test per row of BRAIN.md's behaviour table. Each runs with every optional subsystem off
// (the pure reactive brain) and, where the row must hold regardless, with everything on.

const route = [
  { x: 0, y: 8, z: 0 },
  { x: 100, y: 8, z: 0 },
];

for (const [label, b] of [
  ['reactive only', allOff()],
  ['all on', bundle()],
] as const) {
  test(`route, nothing hostile: MoveTo the current waypoint at walk, the other within 1.5 m (${label})`, () => {
    const brain = new Brain(b);
    let r = brain.tick(req(1, 0, self({ x: 50, y: 8, z: 0 }), { route }));
    assert.deepEqual(r.intents, [{ kind: 'MoveTo', to: { x: 0, y: 8, z: 0 }, speed: 'walk' }]);
    assert.equal(r.posture, 'standing');
    // 1.6 m short of the waypoint: still heading there.
    r = brain.tick(req(1, 1, self({ x: 1.6, y: 8, z: 0 }), { route }));
    assert.deepEqual(find(r, 'MoveTo')?.to, { x: 0, y: 8, z: 0 });
    // Within 1.5 m horizontally (y differs: it is up and does not count): switches.
    r = brain.tick(req(1, 2, self({ x: 1.0, y: 20, z: 0.5 }), { route }));
    assert.deepEqual(r.intents, [{ kind: 'MoveTo', to: { x: 100, y: 8, z: 0 }, speed: 'walk' }]);
    r = brain.tick(req(1, 3, self({ x: 60, y: 8, z: 0 }), { route }));
    assert.deepEqual(find(r, 'MoveTo')?.to, { x: 100, y: 8, z: 0 });
    r = brain.tick(req(1, 4, self({ x: 99, y: 8, z: 0.2 }), { route }));
    assert.deepEqual(find(r, 'MoveTo')?.to, { x: 0, y: 8, z: 0 }, 'cycles back to the first');
  });

  test(`hostile visible, armed: Face then Engage, posture by range (${label})`, () => {
    const brain = new Brain(b);
    const cases = [
      { d: 10, posture: 'crouched' },
      { d: 14.9, posture: 'crouched' },
      { d: 15, posture: 'standing' },
      { d: 120, posture: 'standing' },
      { d: 121, posture: 'prone' },
    ];
    cases.forEach(({ d, posture }, i) => {
      const r = brain.tick(req(10 + i, 0, self(), { targets: [hostile(7, { x: d, y: 8, z: 0 })], route }));
      assert.deepEqual(kinds(r).slice(0, 2), ['Face', 'Engage'], `at ${d} m`);
      assert.equal(r.posture, posture, `at ${d} m`);
      assert.deepEqual(r.intents[0], { kind: 'Face', yaw_deg: 90 }, 'east is 90°');
      // Purely reactive, it fires at once; with human factors the first shot waits for the acquisition delay
      // (behaviour-ii.test.ts), from this very tick: a character new to the brain aims like any other.
      const engage = r.intents[1] as { kind: string; target: number; fire: boolean };
      assert.deepEqual({ kind: engage.kind, target: engage.target }, { kind: 'Engage', target: 7 });
      if (label === 'reactive only') assert.equal(engage.fire, true);
    });
  });

  test(`yaw: 0 = +z north, clockwise, normalised to [0, 360) (${label})`, () => {
    const brain = new Brain(b);
    const at = [
      [{ x: 0, y: 8, z: 30 }, 0],
      [{ x: 30, y: 8, z: 30 }, 45],
      [{ x: 0, y: 8, z: -30 }, 180],
      [{ x: -30, y: 8, z: 0 }, 270],
      [{ x: -30, y: 8, z: 30 }, 315],
    ] as const;
    at.forEach(([pos, yaw], i) => {
      const r = brain.tick(req(30 + i, 0, self(), { targets: [hostile(7, pos)] }));
      assert.deepEqual(r.intents[0], { kind: 'Face', yaw_deg: yaw });
    });
  });

  test(`the most threatening visible hostile is engaged: nearest, weighted by kind (${label})`, () => {
    const brain = new Brain(b);
    const r = brain.tick(
      req(40, 0, self(), {
        targets: [
          hostile(1, { x: 60, y: 8, z: 0 }),
          hostile(2, { x: 20, y: 8, z: 0 }),
          hostile(3, { x: 5, y: 8, z: 0 }, { visible: false }),
          { id: 4, kind: 'player', pos: { x: 2, y: 8, z: 0 }, hostile: false, visible: true },
        ],
      }),
    );
    assert.deepEqual(find(r, 'Engage'), { kind: 'Engage', target: 2, fire: true });
    // A player slightly farther outranks a zombie: people shoot back.
    const r2 = brain.tick(req(41, 0, self(), { targets: [hostile(5, { x: 20, y: 8, z: 0 }, { kind: 'zombie' }), hostile(6, { x: 24, y: 8, z: 0 })] }));
    assert.equal(find(r2, 'Engage')?.target, 6);
  });

  test(`coward, unarmed or out of ammo: Flee with MoveTo away at sprint (${label})`, () => {
    const brain = new Brain(b);
    const threat = hostile(7, { x: 10, y: 8, z: 0 });
    const variants = [
      { profile: { coward: true }, state: {} },
      { profile: { traits: { neuroticism: 0.9, agreeableness: 0.1 } }, state: {} },
      { profile: {}, state: { has_weapon: false } },
      { profile: {}, state: { ammo: 0 } },
    ];
    variants.forEach(({ profile, state }, i) => {
      const r = brain.tick(req(50 + i, 0, self({ x: 0, y: 8, z: 0 }, state), { targets: [threat] }, profile));
      assert.deepEqual(kinds(r).slice(0, 2), ['Flee', 'MoveTo'], JSON.stringify({ profile, state }));
      assert.deepEqual(r.intents[0], { kind: 'Flee', from: 7 });
      const m = find(r, 'MoveTo')!;
      assert.equal(m.speed, 'sprint');
      assert.ok(m.to.x < -20 && Math.abs(m.to.z) < 1e-9, `directly away from the threat, got ${JSON.stringify(m.to)}`);
    });
  });

  test(`a coward ends farther away after following its MoveTo (${label})`, () => {
    const brain = new Brain(b);
    const threatPos = { x: 0, y: 8, z: 0 };
    let pos = { x: 5, y: 8, z: 3 };
    const start = Math.hypot(pos.x, pos.z);
    for (let t = 0; t < 20; t++) {
      const r = brain.tick(req(60, t, self(pos), { targets: [hostile(7, threatPos)] }, { coward: true }));
      assert.equal(r.intents[0]!.kind, 'Flee');
      pos = follow(pos, r, 1);
    }
    const end = Math.hypot(pos.x, pos.z);
    assert.ok(end > start + 100, `from ${start} m to ${end} m`);
  });

  test(`hostile lost from sight while wounded: Investigate its last known position, crouched (${label})`, () => {
    for (const wound of [{ health: 59 }, { blood: 2999 }]) {
      const brain = new Brain(b);
      brain.tick(req(70, 0, self(), { targets: [hostile(7, { x: 30, y: 8, z: 40 })] }));
      const r = brain.tick(req(70, 2, self({ x: 0, y: 8, z: 0 }, wound), { targets: [hostile(7, { x: 35, y: 8, z: 45 }, { visible: false })] }));
      assert.deepEqual(r.intents.slice(0, 2), [
        { kind: 'Investigate', at: { x: 30, y: 8, z: 40 } },
        { kind: 'MoveTo', to: { x: 30, y: 8, z: 40 }, speed: 'walk' },
      ]);
      assert.equal(r.posture, 'crouched');
    }
  });

  test(`not wounded, or contact too old: no Investigate (${label})`, () => {
    const brain = new Brain(b);
    brain.tick(req(80, 0, self(), { targets: [hostile(7, { x: 30, y: 8, z: 40 })] }));
    let r = brain.tick(req(80, 2, self(), { route }));
    assert.equal(find(r, 'Investigate'), undefined);
    brain.tick(req(81, 0, self(), { targets: [hostile(7, { x: 30, y: 8, z: 40 })] }));
    r = brain.tick(req(81, 100, self({ x: 0, y: 8, z: 0 }, { health: 30 }), { route }));
    assert.equal(find(r, 'Investigate'), undefined);
  });
}

test('otherwise idle when purely reactive', () => {
  const brain = new Brain(allOff());
  const r = brain.tick(req(1, 0, self()));
  assert.deepEqual(r, { agent: 1, posture: 'standing', intents: [{ kind: 'Idle', reason: 'none' }] });
});

test('every intent carries only JSON scalars and {x,y,z}', () => {
  const brain = new Brain(bundle());
  const scalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  for (let t = 0; t < 60; t++) {
    const r = brain.tick(req(1, t, self(), { targets: t % 3 === 0 ? [hostile(7, { x: 10, y: 8, z: t })] : [], route }));
    for (const intent of r.intents) {
      for (const v of Object.values(intent)) {
        if (typeof v === 'object' && v !== null) assert.deepEqual(Object.keys(v).sort(), ['x', 'y', 'z']);
        else assert.ok(scalar(v), JSON.stringify(intent));
      }
    }
  }
});
