import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, parseTickRequest, type TickResponse } from '../../brain/index.js';
import {
  ACQUIRE_MAX_S,
  AMBIENT_MAX_S,
  AMBIENT_MIN_S,
  DETOUR_M,
  FLEE_MIN_S,
  NO_PROGRESS_S,
  PAUSE_GAP_S,
  PAUSE_MAX_S,
  PAUSE_MIN_S,
  SEEK_BRAVERY,
  MAX_SHOOTERS_PER_TARGET,
  NO_RETURN_S,
  SEARCH_MAX_S,
  SEARCH_MIN_S,
  WIND_DOWN_MAX_S,
} from '../../brain/conduct.js';
import { bundle, find, follow, hostile, kinds, req, self } from './sim.js';
import { HEED_MAX_S } from '../../brain/squads.js';

// Believable conduct, with human_factors on (the default). Goals are off where they would move the character.
const calm = { traits: { neuroticism: 0.1, agreeableness: 0.6, conscientiousness: 0.2, openness: 0.3, extraversion: 0.5 } };
const nervous = { traits: { neuroticism: 0.6, agreeableness: 0.6, conscientiousness: 0.9, openness: 0.3, extraversion: 0.5 } };

test('a hostile first seen on a later tick is engaged at once, fired on after the acquisition delay', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  brain.tick(req(1, 0, self(), {}, nervous));
  const first = brain.tick(req(1, 1, self(), { targets: [hostile(7, { x: 80, y: 8, z: 0 })] }, nervous));
  assert.deepEqual(kinds(first).slice(0, 2), ['Face', 'Engage']);
  assert.equal(find(first, 'Engage')!.fire, false, 'aims before it shoots');
  let firedAt = -1;
  for (let t = 1.1; t < 1 + ACQUIRE_MAX_S + 0.2 && firedAt < 0; t += 0.1) {
    if (find(brain.tick(req(1, t, self(), { targets: [hostile(7, { x: 80, y: 8, z: 0 })] }, nervous)), 'Engage')!.fire) firedAt = t - 1;
  }
  assert.ok(firedAt >= 0.3 && firedAt <= ACQUIRE_MAX_S + 0.1, `first shot after ${firedAt} s`);
  // A calm character fires at once at a close target.
  brain.tick(req(2, 0, self(), {}, calm));
  assert.equal(find(brain.tick(req(2, 1, self(), { targets: [hostile(7, { x: 20, y: 8, z: 0 })] }, calm)), 'Engage')!.fire, true);
});

test('fire comes in bursts with pauses (no turret)', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  brain.tick(req(1, 0, self(), {}, calm));
  let pauses = 0;
  let last = false;
  let shots = 0;
  for (let t = 1; t <= 31; t += 0.25) {
    const fire = find(brain.tick(req(1, t, self(), { targets: [hostile(7, { x: 20, y: 8, z: 0 })] }, calm)), 'Engage')!.fire;
    if (last && !fire) pauses++;
    if (fire) shots++;
    last = fire;
  }
  assert.ok(pauses >= 3, `${pauses} pauses in 30 s`);
  assert.ok(shots > 40, `${shots} firing ticks`);
});

test(`at most ${MAX_SHOOTERS_PER_TARGET} members of a squad fire at one target at a time`, () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const ids = [1, 2, 3, 4, 5, 6];
  for (const id of ids) brain.tick(req(id, 0, self({ x: id, y: 8, z: 0 }), { squad: 'a' }, calm));
  let most = 0;
  for (let t = 1; t < 20; t += 0.5) {
    let n = 0;
    for (const id of ids)
      if (find(brain.tick(req(id, t, self({ x: id, y: 8, z: 0 }), { squad: 'a', targets: [hostile(9, { x: 20, y: 8, z: 0 })] }, calm)), 'Engage')?.fire) n++;
    most = Math.max(most, n);
  }
  assert.equal(most, MAX_SHOOTERS_PER_TARGET);
});

test('a careful, nervous character falls back to the nearest poi of kind cover', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const poi = [
    { id: 'far', kind: 'cover', pos: { x: -70, y: 8, z: 0 } },
    { id: 'wall', kind: 'cover', pos: { x: -10, y: 8, z: 5 } },
    { id: 'well', kind: 'water', pos: { x: -5, y: 8, z: 0 } },
  ];
  brain.tick(req(1, 0, self(), { poi }, nervous));
  const r = brain.tick(req(1, 1, self(), { poi, targets: [hostile(7, { x: 60, y: 8, z: 0 })] }, nervous));
  assert.deepEqual(kinds(r).slice(0, 2), ['Face', 'Engage']);
  assert.deepEqual(find(r, 'MoveTo')?.to, { x: -10, y: 8, z: 5 });
});

test('a cover poi is part of the tick contract: validated like every poi', () => {
  const ok = parseTickRequest(req(1, 0, self(), { poi: [{ id: 'wall', kind: 'cover', pos: { x: 1, y: 0, z: 2 } }] }));
  assert.equal(ok.ok, true);
  const bad = parseTickRequest(req(1, 0, self(), { poi: [{ id: 'wall', kind: 'cover', pos: { x: Number.NaN, y: 0, z: 2 } }] }));
  assert.equal(bad.ok, false);
  assert.ok(!bad.ok && bad.problems.some((p) => p.path.startsWith('snapshot.poi[0].pos')), JSON.stringify(bad));
});

test('a flight is kept for at least 8 s out of sight, and what was fled from is not investigated for 60 s', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const wounded = { health: 40 };
  let pos = { x: 0, y: 8, z: 0 };
  brain.tick(req(1, 0, self(pos, wounded), {}, { coward: true }));
  let r: TickResponse = brain.tick(req(1, 1, self(pos, wounded), { targets: [hostile(7, { x: 10, y: 8, z: 0 })] }, { coward: true }));
  assert.equal(r.intents[0]!.kind, 'Flee');
  let fledUntil = 1;
  for (let t = 1.5; t < 1 + NO_RETURN_S - 1; t += 0.5) {
    pos = { x: pos.x - 1, y: 8, z: 0 };
    r = brain.tick(req(1, t, self(pos, wounded), { targets: [hostile(7, { x: 10, y: 8, z: 0 }, { visible: false })] }, { coward: true }));
    if (r.intents[0]!.kind === 'Flee') fledUntil = t;
    assert.equal(find(r, 'Investigate'), undefined, `at ${t} s`);
  }
  assert.ok(fledUntil - 1 >= FLEE_MIN_S - 0.5, `fled for ${fledUntil - 1} s`);
});

test('a flight away from two hostiles runs from both, not toward one of them', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const r = brain.tick(req(1, 0, self(), { targets: [hostile(7, { x: 20, y: 8, z: 0 }), hostile(8, { x: 0, y: 8, z: 20 })] }, { coward: true }));
  const to = find(r, 'MoveTo')!.to;
  assert.ok(to.x < 0 && to.z < 0, JSON.stringify(to));
});

test('a squad investigation jogs to 30 m, goes crouched, searches the spot 10-20 s, then is over', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const spotter = { x: 0, y: 8, z: 0 };
  brain.tick(req(1, 0, self(spotter), { squad: 'a' }, calm));
  brain.tick(req(2, 0, self({ x: 0, y: 8, z: 40 }), { squad: 'a' }, calm));
  brain.tick(req(1, 1, self(spotter), { squad: 'a', targets: [hostile(7, { x: 0, y: 8, z: -60 })] }, calm));
  let pos = { x: 0, y: 8, z: 40 };
  const seen: string[] = [];
  let searched = 0;
  for (let t = 1; t < 200; t += 0.5) {
    const r = brain.tick(req(2, t, self(pos), { squad: 'a' }, calm));
    const inv = find(r, 'Investigate');
    // The callout is taken up after the member's own delay (at most HEED_MAX_S).
    if (inv === undefined && seen.length === 0 && t <= 1 + HEED_MAX_S) continue;
    if (inv === undefined) break;
    const m = find(r, 'MoveTo');
    const d = Math.hypot(pos.x - inv.at.x, pos.z - inv.at.z);
    if (m) {
      seen.push(`${d > 30 ? 'far' : 'near'}:${m.speed}:${r.posture}`);
      const step = (m.speed === 'jog' ? 3.5 : 1.4) * 0.5;
      pos = { x: pos.x + ((m.to.x - pos.x) / d) * Math.min(step, d), y: 8, z: pos.z + ((m.to.z - pos.z) / d) * Math.min(step, d) };
    } else searched += 0.5;
  }
  assert.ok(seen.includes('far:jog:standing') && seen.includes('near:walk:crouched'), [...new Set(seen)].join());
  assert.ok(searched >= SEARCH_MIN_S - 0.5 && searched <= SEARCH_MAX_S + 0.5, `searched ${searched} s`);
});

test('heard speech from a perceived target turns the character toward the speaker at once', () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const speaker = { id: 5, kind: 'player' as const, pos: { x: 0, y: 8, z: -10 }, hostile: false, visible: true };
  brain.tick(req(1, 0, self(), { targets: [speaker] }));
  const r = brain.tick(req(1, 1, self(), { targets: [speaker], heard: [{ from: 5, text: 'hey', at_s: 0.9 }] }));
  assert.deepEqual(find(r, 'Face'), { kind: 'Face', yaw_deg: 180 });
});

test('an idle character looks around every few seconds, and emotes 2-6 times an hour', () => {
  const brain = new Brain(bundle({ global_goals: false }, (b) => (b.population.session_min = [600, 600])));
  let last = '';
  let since = 0;
  let longest = 0;
  let emotes = 0;
  const names = new Set<string>();
  for (let t = 0; t < 5 * 3600; t += 1) {
    const r = brain.tick(req(1, t, self()));
    if (r.intents.some((i) => i.kind === 'Idle' && (i.reason === 'afk' || i.reason === 'break'))) {
      last = '';
      continue;
    }
    const e = find(r, 'Emote');
    if (e) {
      emotes++;
      names.add(e.name);
    }
    const text = JSON.stringify(r);
    if (text !== last) {
      last = text;
      since = t;
    }
    longest = Math.max(longest, t - since);
  }
  assert.ok(longest <= 10, `the same reply for ${longest} s`);
  const perHour = emotes / 5;
  assert.ok(perHour >= 3600 / AMBIENT_MAX_S - 0.5 && perHour <= 3600 / AMBIENT_MIN_S, `${perHour} emotes an hour`);
  assert.ok(names.size >= 1, [...names].join());
});

test('the last seconds of a session are a wind-down standing still, then Logoff', () => {
  const brain = new Brain(bundle({}, (b) => (b.population.session_min = [2, 2])));
  const route = [
    { x: 0, y: 8, z: 0 },
    { x: 100, y: 8, z: 0 },
  ];
  let moveT = 0;
  let logoffT = -1;
  for (let t = 0; t < 150 && logoffT < 0; t += 0.5) {
    const r = brain.tick(req(1, t, self(), { route }));
    if (find(r, 'MoveTo')) moveT = t;
    if (find(r, 'Logoff')) logoffT = t;
  }
  assert.ok(logoffT >= 120 && logoffT <= 121, `logoff at ${logoffT}`);
  assert.ok(logoffT - moveT >= 10 && logoffT - moveT <= WIND_DOWN_MAX_S + 0.5, `still for ${logoffT - moveT} s`);
});

test(`a patrol pauses ${PAUSE_MIN_S}-${PAUSE_MAX_S} s at a waypoint now and then, looking around, then walks on`, () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const route = [
    { x: 0, y: 8, z: 0 },
    { x: 30, y: 8, z: 0 },
  ];
  let pos = { x: 15, y: 8, z: 0 };
  const pauses: number[] = [];
  const starts: number[] = [];
  let pausedSince = -1;
  let switches = 0;
  let last: string | undefined;
  for (let t = 0; t < 300; t += 0.5) {
    const r = brain.tick(req(1, t, self(pos), { route }, calm));
    const m = find(r, 'MoveTo');
    if (m === undefined) {
      assert.equal(find(r, 'Idle')?.reason, 'looking_around', `at ${t} s`);
      if (pausedSince < 0) starts.push((pausedSince = t));
    } else {
      if (pausedSince >= 0) pauses.push(t - pausedSince);
      pausedSince = -1;
      const key = JSON.stringify(m.to);
      if (last !== undefined && key !== last) switches++;
      last = key;
    }
    pos = follow(pos, r, 0.5);
  }
  assert.ok(pauses.length >= 3, `paused ${pauses.length} times`);
  for (const p of pauses) assert.ok(p >= PAUSE_MIN_S && p <= PAUSE_MAX_S + 0.5, `paused ${p} s`);
  // Not at every waypoint: ~20 s between waypoints, a pause at most every PAUSE_GAP_S.
  assert.ok(pauses.length < switches, `${pauses.length} pauses for ${switches} waypoints`);
  assert.ok(starts[0]! >= PAUSE_GAP_S && starts.every((t, i) => i === 0 || t - starts[i - 1]! >= PAUSE_GAP_S), starts.join());
});

test(`a character that makes no progress for ${NO_PROGRESS_S} s steps aside, and gives a blocked destination up`, () => {
  const brain = new Brain(bundle({ global_goals: false }));
  const route = [
    { x: 0, y: 8, z: 0 },
    { x: 100, y: 8, z: 0 },
  ];
  // A wall at x = 50 the character cannot pass: it stays where it is whatever it is told.
  const wall = (p: { x: number; y: number; z: number }) => ({ ...p, x: Math.min(p.x, 50) });
  let pos = { x: 40, y: 8, z: 0 };
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { route }, calm));
  let aside: { x: number; z: number } | null = null;
  let gaveUp = -1;
  for (let t = 1; t < 80 && gaveUp < 0; t += 0.5) {
    const r = brain.tick(req(1, t, self(pos), { route }, calm));
    const m = find(r, 'MoveTo');
    if (m !== undefined && aside === null && Math.abs(m.to.z) > 1) aside = m.to;
    if (m !== undefined && aside !== null && m.to.x === 0 && m.to.z === 0) gaveUp = t;
    pos = wall(follow(pos, r, 0.5));
  }
  assert.ok(aside !== null, 'never stepped aside');
  assert.ok(Math.abs(Math.abs(aside.z) - DETOUR_M) < 5, `stepped aside to ${JSON.stringify(aside)}`);
  assert.ok(gaveUp > 0, 'never gave the blocked waypoint up');
});

test('a brave, healthy character goes to look where a hostile it saw itself went out of sight; a timid one does not', () => {
  const brave = { traits: { neuroticism: 0.05, agreeableness: 0.2, conscientiousness: 0.2, openness: 0.5, extraversion: 0.9 } };
  const timid = { traits: { neuroticism: 0.55, agreeableness: 0.6, conscientiousness: 0.5, openness: 0.5, extraversion: 0.1 } };
  const looks = (profile: typeof brave) => {
    const brain = new Brain(bundle({ global_goals: false }));
    brain.tick(req(1, 0, self(), {}, profile));
    brain.tick(req(1, 1, self(), { targets: [hostile(7, { x: 40, y: 8, z: 0 })] }, profile));
    const r = brain.tick(req(1, 2, self(), { targets: [hostile(7, { x: 40, y: 8, z: 0 }, { visible: false })] }, profile));
    return find(r, 'Investigate') !== undefined;
  };
  assert.equal(looks(brave), true, `bravery >= ${SEEK_BRAVERY}`);
  assert.equal(looks(timid), false);
});
