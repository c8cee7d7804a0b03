import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { FLEE_MAX_S, FLEE_MIN_S } from '../../brain/conduct.js';
import { HEED_MAX_S, HEED_MIN_S } from '../../brain/squads.js';
import { bundle, find, follow, hostile, req, self } from './sim.js';

/** Believable behaviour II: no constants where people vary, and squads that talk. */

const coward = { coward: true };
const brave = { coward: false, traits: { neuroticism: 0.1, agreeableness: 0.3, extraversion: 0.6, conscientiousness: 0.3 } };

function yawTo(ax: number, az: number, bx: number, bz: number): number {
  return ((((Math.atan2(bx - ax, bz - az) * 180) / Math.PI) % 360) + 360) % 360;
}
function turn(a: number, b: number): number {
  const d = Math.abs(a - b) % 360;
  return d > 180 ? 360 - d : d;
}

test('flight lengths vary from character to character, within the least and most a flight is kept', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const lengths = new Set<number>();
  for (let id = 1; id <= 40; id++) {
    let pos = { x: id * 1000, y: 8, z: 0 };
    const threat = hostile(900_000 + id, { x: id * 1000, y: 8, z: 20 });
    brain.tick(req(id, 0, self(pos), {}, coward));
    let r = brain.tick(req(id, 0.5, self(pos), { targets: [threat] }, coward));
    pos = follow(pos, r, 0.5);
    let t = 1;
    for (; t < 60; t += 0.5) {
      r = brain.tick(req(id, t, self(pos), { targets: [{ ...threat, visible: false }] }, coward));
      if (find(r, 'Flee') === undefined) break;
      pos = follow(pos, r, 0.5);
    }
    const len = t - 0.5;
    assert.ok(len >= FLEE_MIN_S && len <= 2 * FLEE_MAX_S + 1, `flight of ${len} s`);
    lengths.add(len);
  }
  assert.ok(lengths.size >= 6, `only ${[...lengths].join(', ')}`);
});

test('the first shot waits longer for a far hostile, and not at all once the character is hit', () => {
  const firstShot = (dist: number, hitAt: number | null): number => {
    const brain = new Brain(bundle({ global_goals: false }));
    const nervous = { coward: false, traits: { neuroticism: 0.5, agreeableness: 0.8, extraversion: 0.6, conscientiousness: 0.2 } };
    brain.tick(req(1, 0, self(), {}, nervous));
    for (let t = 0.5; t < 10; t += 0.25) {
      const health = hitAt !== null && t >= hitAt ? 80 : 100;
      const r = brain.tick(req(1, t, self(undefined, { health }), { targets: [hostile(7, { x: 0, y: 8, z: dist })] }, nervous));
      assert.ok(find(r, 'Engage') !== undefined, 'Engage from the first tick the hostile is seen');
      if (find(r, 'Engage')!.fire) return t - 0.5;
    }
    return Infinity;
  };
  const near = firstShot(20, null);
  const far = firstShot(140, null);
  assert.ok(near >= 0.25 && near <= 1, `at 20 m: ${near} s`);
  assert.ok(far >= 1 && far <= 3, `at 140 m: ${far} s`);
  assert.ok(firstShot(140, 0.75) <= 0.25, 'shot at while aiming: it fires back at once');
});

test('a callout is heard by each squadmate after its own delay: it turns toward the caller, then goes to look', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const caller = { x: 0, y: 8, z: 0 };
  const mates = [2, 3, 4, 5, 6, 7];
  const at = (id: number) => ({ x: 40, y: 8, z: id * 6 });
  brain.tick(req(1, 0, self(caller), { squad: 'a' }, brave));
  for (const id of mates) brain.tick(req(id, 0, self(at(id)), { squad: 'a' }, brave));
  brain.tick(req(1, 1, self(caller), { squad: 'a', targets: [hostile(99, { x: -60, y: 8, z: 0 })] }, brave));
  const delays = new Set<number>();
  let investigators = 0;
  for (const id of mates) {
    let turned = -1;
    let taken = -1;
    for (let t = 1; t <= 1 + HEED_MAX_S + 0.5; t = Math.round((t + 0.1) * 10) / 10) {
      const r = brain.tick(req(id, t, self(at(id)), { squad: 'a' }, brave));
      const face = find(r, 'Face');
      if (turned < 0 && face !== undefined && turn(face.yaw_deg, yawTo(at(id).x, at(id).z, caller.x, caller.z)) < 1) turned = t;
      if (taken < 0 && find(r, 'Investigate') !== undefined) taken = t;
    }
    assert.ok(turned - 1 >= HEED_MIN_S - 0.05 && turned - 1 <= HEED_MAX_S + 0.05, `member ${id} turned after ${turned - 1} s`);
    if (taken > 0) {
      investigators++;
      assert.ok(taken >= turned, `member ${id} went (${taken}) before it heard (${turned})`);
    }
    delays.add(Math.round((turned - 1) * 10));
  }
  assert.ok(delays.size >= 3, `delays ${[...delays].join(', ')}`);
  assert.equal(investigators, 2, 'at most two go to look');
});

test('a blocked flight tries the sides, never runs within 90 degrees of a threat, and hides when none is left', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const pos = { x: 0, y: 8, z: 0 };
  const threats = [hostile(7, { x: 0, y: 8, z: 30 }), hostile(8, { x: 20, y: 8, z: 25 })];
  brain.tick(req(1, 0, self(pos), {}, coward));
  const bearings: number[] = [];
  let hid = false;
  for (let t = 0.5; t < 16; t += 0.5) {
    // A wall: the character never moves.
    const r = brain.tick(req(1, t, self(pos), { targets: t < 8 ? threats : threats.map((x) => ({ ...x, visible: false })) }, coward));
    assert.ok(find(r, 'Flee') !== undefined);
    const m = find(r, 'MoveTo');
    if (m === undefined) {
      hid = true;
      assert.equal(r.posture, 'crouched');
      continue;
    }
    assert.ok(!hid, 'once hidden it stays hidden while still blocked');
    const b = yawTo(pos.x, pos.z, m.to.x, m.to.z);
    for (const h of threats) assert.ok(turn(b, yawTo(pos.x, pos.z, h.pos.x, h.pos.z)) > 90, `bearing ${b} toward ${JSON.stringify(h.pos)} at ${t}`);
    bearings.push(Math.round(b));
  }
  assert.ok(new Set(bearings).size >= 2, `tried ${bearings.join(', ')}`);
  assert.ok(hid, 'hides once every side is tried');
});

test('surrounded, a fleeing character hides rather than run toward a threat', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const around = [0, 90, 180, 270].map((deg, i) => hostile(10 + i, { x: Math.sin((deg * Math.PI) / 180) * 30, y: 8, z: Math.cos((deg * Math.PI) / 180) * 30 }));
  brain.tick(req(1, 0, self(), {}, coward));
  const r = brain.tick(req(1, 0.5, self(), { targets: around }, coward));
  assert.ok(find(r, 'Flee') !== undefined);
  assert.equal(find(r, 'MoveTo'), undefined);
  assert.equal(r.posture, 'crouched');
});

test('a member behind a walking leader keeps walking rather than stop and start', () => {
  const brain = new Brain(bundle({}));
  let lead = { x: 0, y: 8, z: 0 };
  let mate = { x: 4, y: 8, z: 0 };
  const route = [
    { x: 0, y: 8, z: 0 },
    { x: 0, y: 8, z: 200 },
  ];
  let flips = 0;
  let last = '';
  for (let t = 0; t < 120; t += 0.5) {
    const rl = brain.tick(req(1, t, self(lead), { squad: 's', route }));
    lead = follow(lead, rl, 0.5);
    const rm = brain.tick(req(2, t, self(mate), { squad: 's' }));
    mate = follow(mate, rm, 0.5);
    const now = find(rm, 'MoveTo') !== undefined ? 'move' : rm.intents.some((i) => i.kind === 'Idle' && i.reason === 'with_squad') ? 'stand' : 'other';
    if (t > 10 && last !== '' && now !== last && (now === 'stand' || last === 'stand')) flips++;
    last = now;
  }
  assert.ok(flips <= 2, `${flips} flips between walking and standing in 2 minutes`);
});

test('profile.coward is kept once given, like name, role and traits: a mod may send the profile on the first tick only', () => {
  const steady = { traits: { neuroticism: 0.1, agreeableness: 0.6, extraversion: 0.6, conscientiousness: 0.4 } };
  const faces = (first: object, later: object, brain = new Brain(bundle({ global_goals: false }))): string => {
    brain.tick(req(1, 0, self(), {}, { ...steady, ...first }));
    const r = brain.tick(req(1, 0.5, self(), { targets: [hostile(7, { x: 0, y: 8, z: 25 })] }, later));
    return find(r, 'Flee') !== undefined ? 'flees' : find(r, 'Engage') !== undefined ? 'engages' : 'neither';
  };
  assert.equal(faces({}, {}), 'engages', 'a steady, armed character fights one hostile');
  assert.equal(faces({}, { coward: true }), 'flees');
  assert.equal(faces({ coward: true }, {}), 'flees', 'the flag given on the first tick still counts when later ticks leave it out');
  assert.equal(faces({ coward: true }, { coward: false }), 'engages', 'an explicit false takes it back');

  // The flag survives a state export and import, as the other profile fields do.
  const before = new Brain(bundle({ global_goals: false }));
  before.tick(req(1, 0, self(), {}, { ...steady, coward: true }));
  const saved = before.exportState();
  assert.equal(saved.agents[0]!.cowardFlag, 1);
  const after = new Brain(bundle({ global_goals: false }));
  after.importState(saved);
  const r = after.tick(req(1, 0.5, self(), { targets: [hostile(7, { x: 0, y: 8, z: 25 })] }));
  assert.ok(find(r, 'Flee') !== undefined, 'a restored coward still runs');
});
