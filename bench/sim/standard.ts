import type { Vec3 } from '../../brain/types.js';
import { seededRandom } from '../../src/random.js';
import { crowdScenario } from './crowd.js';
import type { CharacterSpec, Scenario, ScriptEvent } from './scenario.js';

/**
 * The standard scenarios `bench believability` measures, as data built from a size. Each is
 * fixed by its seed so two runs are the same run; `scale` (0, 1] shrinks durations and
 * populations for the test that pins the goals.
 */

export interface StandardSizes {
  /** Characters in the crowd, waves and quiet runs. */
  agents: number;
  crowdS: number;
  wavesS: number;
  quietS: number;
  /** Characters in the one-hostile probe. */
  probe: number;
  ambushS: number;
}

export const FULL_SIZES: StandardSizes = { agents: 50, crowdS: 300, wavesS: 600, quietS: 3 * 3600, probe: 200, ambushS: 180 };

/** Seconds between two hostiles in the waves run. */
export const WAVE_EVERY_S = 15;
/** How long a wave's hostile stays on the map before it walks off. */
const WAVE_STAY_S = 90;
/** Distance between the probe's pairs: far beyond perception, so every pair is alone. */
const PROBE_SPACING_M = 1000;
/** The probe's hostile stands this far from its character (the 25 m meeting). */
export const PROBE_DISTANCE_M = 25;
export const PROBE_S = 12;

/** The crowd of 50 in squads of five for 5 minutes (roaming players, damage, speech). */
export function crowd(z: StandardSizes): Scenario {
  return { ...crowdScenario(z.agents, z.crowdS, 2, 7), name: 'crowd' };
}

/** The crowd for 10 minutes with a new hostile player walking through every 15 s. */
export function waves(z: StandardSizes): Scenario {
  const base = crowdScenario(z.agents, z.wavesS, 2, 11);
  const rnd = seededRandom(23);
  const script: ScriptEvent[] = [...(base.script ?? [])];
  for (let t = WAVE_EVERY_S, k = 0; t < z.wavesS; t += WAVE_EVERY_S, k++) {
    const a = rnd() * 2 * Math.PI;
    const from = { x: Math.round(Math.sin(a) * 260), y: 0, z: Math.round(Math.cos(a) * 260) };
    const to = { x: Math.round((rnd() - 0.5) * 200), y: 0, z: Math.round((rnd() - 0.5) * 200) };
    const id = 2000 + k;
    script.push({
      at_s: t,
      do: 'spawn',
      character: {
        id,
        brain: false,
        kind: k % 3 === 1 ? 'zombie' : 'player',
        team: 'raiders',
        name: `Raider${k}`,
        pos: from,
        path: [{ at_s: t + WAVE_STAY_S, pos: to }],
      },
    });
    script.push({ at_s: t + WAVE_STAY_S, do: 'remove', id });
  }
  return { ...base, name: 'waves', description: `${z.agents} characters for ${z.wavesS} s, a new hostile every ${WAVE_EVERY_S} s.`, script };
}

/** Three quiet hours: nothing hostile, friendly players strolling through and talking. */
export function quiet(z: StandardSizes): Scenario {
  const base = crowdScenario(z.agents, z.quietS, 2, 5);
  const rnd = seededRandom(31);
  const characters: CharacterSpec[] = base.characters.map((c) => (c.brain ? c : { ...c, kind: 'player', team: 'ai' }));
  const script: ScriptEvent[] = [];
  for (let t = 20; t < z.quietS; t += 20 + Math.round(rnd() * 40)) {
    script.push({ at_s: t, do: 'say', from: 1000 + Math.floor(rnd() * 6), text: 'hey, all quiet?' });
  }
  // A shortened run keeps sessions ending within it (the default 45-180 min would outlast it).
  const bundle = z.quietS < FULL_SIZES.quietS ? { population: { session_min: [z.quietS / 180, z.quietS / 70] } } : undefined;
  return {
    ...base,
    name: 'quiet',
    description: `${z.agents} characters for ${z.quietS} s with nothing hostile.`,
    characters,
    script,
    ...(bundle ? { bundle } : {}),
  };
}

/** 30 characters of the default population in six squads around a camp with cover; a hostile squad of 3 springs an ambush from behind a ridge. */
export function ambush30(z: StandardSizes): Scenario {
  const rnd = seededRandom(41);
  const characters: CharacterSpec[] = [];
  for (let i = 0; i < 30; i++) {
    const sq = Math.floor(i / 5);
    const cx = Math.round(Math.sin((sq * Math.PI) / 3) * 60);
    const cz = Math.round(Math.cos((sq * Math.PI) / 3) * 60);
    const home: Vec3 = { x: cx + Math.round((rnd() - 0.5) * 16), y: 0, z: cz + Math.round((rnd() - 0.5) * 16) };
    characters.push({
      id: i + 1,
      brain: true,
      pos: home,
      squad: `camp${sq}`,
      route: [home, { x: home.x + Math.round((rnd() - 0.5) * 40), y: 0, z: home.z + Math.round((rnd() - 0.5) * 40) }],
    });
  }
  // The raiders wait behind the ridge east of the camp, 50-70 m from the nearest squad, and
  // come out toward the well: an ambush at close range, not a stand-off at the edge of sight.
  for (let k = 0; k < 3; k++) {
    const start = { x: 112 + k * 3, y: 0, z: -42 + k * 8 };
    characters.push({
      id: 100 + k,
      brain: true,
      team: 'raiders',
      squad: 'raiders',
      pos: start,
      health: 100,
      ammo: 120,
      route: [start, { x: 0, y: 0, z: 0 }],
      profile: { name: `Raider${k}`, role: 'bandit', coward: false, traits: { neuroticism: 0.1, agreeableness: 0.3 } },
    });
  }
  return {
    name: 'ambush-30',
    description:
      '30 characters of the default population in six squads of five around a camp; a hostile squad of 3 waits behind a ridge 50-70 m east of the nearest squad and comes out toward the well.',
    duration_s: z.ambushS,
    tick_hz: 2,
    world: {
      obstacles: [
        { min: { x: 20, z: -30 }, max: { x: 24, z: -10 } },
        { min: { x: -40, z: 30 }, max: { x: -20, z: 34 } },
        { min: { x: 104, z: -60 }, max: { x: 108, z: -10 } },
      ],
      poi: [
        { id: 'well', kind: 'water', pos: { x: 0, y: 0, z: 0 } },
        { id: 'wall-east', kind: 'cover', pos: { x: 18, y: 0, z: -20 } },
        { id: 'wall-north', kind: 'cover', pos: { x: -30, y: 0, z: 28 } },
        { id: 'rocks', kind: 'cover', pos: { x: 40, y: 0, z: 50 } },
        { id: 'truck', kind: 'cover', pos: { x: -50, y: 0, z: -40 } },
        { id: 'ridge', kind: 'cover', pos: { x: 102, y: 0, z: -35 } },
      ],
      perception_m: 300,
    },
    characters,
  };
}

/**
 * The clones probe: `probe` characters of the default population, armed and healthy, each
 * alone with one hostile standing 25 m away, far from every other pair.
 */
export function probe(z: StandardSizes): Scenario {
  const characters: CharacterSpec[] = [];
  const side = Math.ceil(Math.sqrt(z.probe));
  for (let i = 0; i < z.probe; i++) {
    const pos = { x: (i % side) * PROBE_SPACING_M, y: 0, z: Math.floor(i / side) * PROBE_SPACING_M };
    characters.push({ id: i + 1, brain: true, pos, health: 100, has_weapon: true, ammo: 30, hunger: 20, thirst: 20 });
    characters.push({ id: 100_000 + i, brain: false, kind: 'player', name: 'Hostile', pos: { x: pos.x, y: 0, z: pos.z + PROBE_DISTANCE_M } });
  }
  return { name: 'probe', description: `${z.probe} characters, one hostile each at ${PROBE_DISTANCE_M} m.`, duration_s: PROBE_S, tick_hz: 4, characters };
}

export function scaled(scale: number): StandardSizes {
  const f = (v: number, min: number): number => Math.max(min, Math.round(v * scale));
  return {
    agents: f(FULL_SIZES.agents, 10),
    crowdS: f(FULL_SIZES.crowdS, 120),
    wavesS: f(FULL_SIZES.wavesS, 120),
    quietS: f(FULL_SIZES.quietS, 600),
    probe: f(FULL_SIZES.probe, 60),
    ambushS: f(FULL_SIZES.ambushS, 150),
  };
}
