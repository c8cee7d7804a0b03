import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTickRequest, TICK_LIMITS } from '../../brain/index.js';
import { fullTick } from '../sidecar/helpers.js';

function problemsOf(value: unknown): { path: string; message: string }[] {
  const r = parseTickRequest(value);
  assert.equal(r.ok, false, 'expected the request to be refused');
  return r.ok ? [] : r.problems;
}

function mutate(edit: (t: any) => void): unknown {
  const t = fullTick() as any;
  edit(t);
  return t;
}

test('a full request parses into the same fields', () => {
  const r = parseTickRequest(fullTick());
  assert.ok(r.ok);
  assert.deepEqual(r.request, fullTick());
});

test('a minimal request parses, and a missing profile is the empty one', () => {
  const t = fullTick() as any;
  const snapshot = { agent: 1, time_s: 0, self_state: t.snapshot.self_state, targets: [] };
  const r = parseTickRequest({ snapshot });
  assert.ok(r.ok);
  assert.deepEqual(r.request, { snapshot, profile: {} });
});

test('unknown fields are dropped, and __proto__ or constructor keys never reach the result', () => {
  const raw = JSON.parse(
    '{"extra":1,"__proto__":{"polluted":true},"snapshot":{"agent":1,"time_s":0,"constructor":{"x":1},"self_state":{"pos":{"x":0,"y":0,"z":0,"w":9},"heading_deg":0,"health":1,"blood":1,"hunger":1,"thirst":1,"has_weapon":false,"ammo":0},"targets":[]},"profile":{"__proto__":{"coward":true},"traits":{"__proto__":{"openness":1},"openness":0.5,"charisma":0.9}}}',
  );
  const r = parseTickRequest(raw);
  assert.ok(r.ok);
  assert.deepEqual(Object.keys(r.request), ['snapshot', 'profile']);
  assert.deepEqual(Object.keys(r.request.snapshot), ['agent', 'time_s', 'self_state', 'targets']);
  assert.deepEqual(r.request.snapshot.self_state.pos, { x: 0, y: 0, z: 0 });
  assert.deepEqual(r.request.profile, { traits: { openness: 0.5 } });
  assert.equal(Object.getPrototypeOf(r.request.profile), Object.prototype);
  assert.equal((r.request.profile as any).coward, undefined);
  assert.equal(({} as any).polluted, undefined);
});

const cases: [string, (t: any) => void, string][] = [
  ['agent not an integer', (t) => (t.snapshot.agent = 1.5), 'snapshot.agent'],
  ['agent beyond safe integers', (t) => (t.snapshot.agent = 2 ** 60), 'snapshot.agent'],
  ['agent as a string', (t) => (t.snapshot.agent = '17'), 'snapshot.agent'],
  ['negative time', (t) => (t.snapshot.time_s = -1), 'snapshot.time_s'],
  ['missing self_state', (t) => delete t.snapshot.self_state, 'snapshot.self_state'],
  ['pos.x a string', (t) => (t.snapshot.self_state.pos.x = '1'), 'snapshot.self_state.pos.x'],
  ['pos null', (t) => (t.snapshot.self_state.pos = null), 'snapshot.self_state.pos'],
  ['health over 100', (t) => (t.snapshot.self_state.health = 101), 'snapshot.self_state.health'],
  ['blood over 5000', (t) => (t.snapshot.self_state.blood = 5001), 'snapshot.self_state.blood'],
  ['hunger negative', (t) => (t.snapshot.self_state.hunger = -0.1), 'snapshot.self_state.hunger'],
  ['thirst missing', (t) => delete t.snapshot.self_state.thirst, 'snapshot.self_state.thirst'],
  ['has_weapon a number', (t) => (t.snapshot.self_state.has_weapon = 1), 'snapshot.self_state.has_weapon'],
  ['negative ammo', (t) => (t.snapshot.self_state.ammo = -3), 'snapshot.self_state.ammo'],
  ['fractional ammo', (t) => (t.snapshot.self_state.ammo = 2.5), 'snapshot.self_state.ammo'],
  ['targets missing', (t) => delete t.snapshot.targets, 'snapshot.targets'],
  ['targets an object', (t) => (t.snapshot.targets = {}), 'snapshot.targets'],
  ['too many targets', (t) => (t.snapshot.targets = new Array(TICK_LIMITS.maxTargets + 1).fill(t.snapshot.targets[0])), 'snapshot.targets'],
  ['unknown target kind', (t) => (t.snapshot.targets[0].kind = 'dragon'), 'snapshot.targets[0].kind'],
  ['target pos.z missing', (t) => delete t.snapshot.targets[0].pos.z, 'snapshot.targets[0].pos.z'],
  ['target name too long', (t) => (t.snapshot.targets[0].name = 'x'.repeat(65)), 'snapshot.targets[0].name'],
  ['target health a string', (t) => (t.snapshot.targets[0].health = 'full'), 'snapshot.targets[0].health'],
  ['route too long', (t) => (t.snapshot.route = new Array(65).fill({ x: 0, y: 0, z: 0 })), 'snapshot.route'],
  ['route point not an object', (t) => (t.snapshot.route[1] = [1, 2, 3]), 'snapshot.route[1]'],
  ['poi id a number', (t) => (t.snapshot.poi[0].id = 7), 'snapshot.poi[0].id'],
  ['heard text too long', (t) => (t.snapshot.heard[0].text = 'y'.repeat(501)), 'snapshot.heard[0].text'],
  ['heard from fractional', (t) => (t.snapshot.heard[0].from = 0.5), 'snapshot.heard[0].from'],
  ['squad too long', (t) => (t.snapshot.squad = 's'.repeat(65)), 'snapshot.squad'],
  ['profile an array', (t) => (t.profile = []), 'profile'],
  ['unknown role', (t) => (t.profile.role = 'king'), 'profile.role'],
  ['coward a string', (t) => (t.profile.coward = 'yes'), 'profile.coward'],
  ['trait above 1', (t) => (t.profile.traits.openness = 1.5), 'profile.traits.openness'],
  ['traits a number', (t) => (t.profile.traits = 3), 'profile.traits'],
];

for (const [name, edit, path] of cases) {
  test(`refused with its path: ${name}`, () => {
    const problems = problemsOf(mutate(edit));
    assert.equal(problems[0]?.path, path, JSON.stringify(problems));
  });
}

test('NaN and Infinity are refused wherever a number goes', () => {
  assert.equal(problemsOf(mutate((t) => (t.snapshot.self_state.pos.y = NaN)))[0]?.path, 'snapshot.self_state.pos.y');
  assert.equal(problemsOf(mutate((t) => (t.snapshot.time_s = Infinity)))[0]?.path, 'snapshot.time_s');
  assert.equal(problemsOf(mutate((t) => (t.snapshot.self_state.heading_deg = -Infinity)))[0]?.path, 'snapshot.self_state.heading_deg');
  assert.equal(problemsOf(mutate((t) => (t.snapshot.targets[0].pos.x = NaN)))[0]?.path, 'snapshot.targets[0].pos.x');
});

test('the problem list is capped however wrong the input is', () => {
  const targets = new Array(TICK_LIMITS.maxTargets).fill({ kind: 1 });
  const problems = problemsOf(mutate((t) => (t.snapshot.targets = targets)));
  assert.equal(problems.length, TICK_LIMITS.maxProblems);
});

test('a body that is not an object is refused at the root', () => {
  for (const v of [null, 3, 'tick', [], true]) assert.equal(problemsOf(v)[0]?.path, '');
});

test('an out-of-range number names the bound it broke (an agent past 2^53 - 1 is "at most", not "at least")', () => {
  const safe = Number.MAX_SAFE_INTEGER;
  const high = problemsOf(mutate((t) => (t.snapshot.agent = safe + 1))).find((p) => p.path === 'snapshot.agent');
  assert.equal(high?.message, `must be at most ${safe}, got ${safe + 1}`);
  const low = problemsOf(mutate((t) => (t.snapshot.agent = -safe - 1))).find((p) => p.path === 'snapshot.agent');
  assert.equal(low?.message, `must be at least ${-safe}, got ${-safe - 1}`);
  const time = problemsOf(mutate((t) => (t.snapshot.time_s = -1))).find((p) => p.path === 'snapshot.time_s');
  assert.equal(time?.message, 'must be at least 0, got -1');
});
