import { ROLES, type Vec3 } from '../../brain/types.js';
import { seededRandom } from '../../src/random.js';
import type { CharacterSpec, Obstacle, Scenario } from './scenario.js';

/**
 * A busy session: `agents` characters in squads of five with patrol routes, needs and mixed
 * temperaments, a few players roaming through on scripted paths, walls and points of
 * interest. Used to record and replay long sessions.
 */
export function crowdScenario(agents = 50, durationS = 300, tickHz = 2, seed = 7): Scenario {
  // Seeded: the crowd must be the same on every machine and every run.
  const rnd = seededRandom(seed);
  const obstacles: Obstacle[] = [
    { min: { x: -50, z: -5 }, max: { x: 50, z: 5 } },
    { min: { x: 100, z: -100 }, max: { x: 110, z: 100 } },
  ];
  // Nobody starts or patrols inside a wall: a draw that lands in one (or within a metre of it) is drawn again.
  const inWall = (p: Vec3): boolean => obstacles.some((o) => p.x >= o.min.x - 1 && p.x <= o.max.x + 1 && p.z >= o.min.z - 1 && p.z <= o.max.z + 1);
  const at = (spread: number, near: Vec3 = { x: 0, y: 0, z: 0 }): Vec3 => {
    for (;;) {
      const p = { x: near.x + Math.round((rnd() - 0.5) * spread), y: 0, z: near.z + Math.round((rnd() - 0.5) * spread) };
      if (!inWall(p)) return p;
    }
  };
  const characters: CharacterSpec[] = [];
  // A squad spawns together, as squads do in games: its members start within 30 m of its camp.
  let camp: Vec3 = { x: 0, y: 0, z: 0 };
  for (let i = 0; i < agents; i++) {
    if (i % 5 === 0) camp = at(400);
    const home = at(30, camp);
    characters.push({
      id: i + 1,
      brain: true,
      pos: home,
      health: 60 + Math.round(rnd() * 40),
      hunger: Math.round(rnd() * 80),
      thirst: Math.round(rnd() * 80),
      has_weapon: rnd() > 0.15,
      ammo: Math.round(rnd() * 30),
      squad: `s${Math.floor(i / 5)}`,
      route: [home, at(80, home)],
      profile: { name: `Bot${i + 1}`, role: ROLES[i % ROLES.length]!, coward: rnd() < 0.15 },
    });
  }
  for (let p = 0; p < 6; p++) {
    const path = [];
    for (let k = 0; k <= 10; k++) path.push({ at_s: (durationS * k) / 10, pos: at(500) });
    characters.push({ id: 1000 + p, brain: false, kind: p % 3 === 2 ? 'zombie' : 'player', name: `Player${p}`, pos: path[0]!.pos, path });
  }
  const script = [];
  for (let k = 0; k < 20; k++) {
    script.push({ at_s: Math.round(rnd() * durationS), do: 'damage' as const, target: 1 + Math.floor(rnd() * agents), amount: 10 + Math.round(rnd() * 20) });
    script.push({ at_s: Math.round(rnd() * durationS), do: 'say' as const, from: 1000 + Math.floor(rnd() * 6), text: 'anyone there?' });
  }
  return {
    name: `crowd-${agents}`,
    description: `${agents} agents in squads of five for ${durationS} s at ${tickHz} Hz with roaming players, damage and speech.`,
    duration_s: durationS,
    tick_hz: tickHz,
    world: {
      obstacles,
      poi: [
        { id: 'well', kind: 'water', pos: { x: 0, y: 0, z: 80 } },
        { id: 'store', kind: 'food', pos: { x: -120, y: 0, z: 40 } },
        { id: 'crates', kind: 'loot', pos: { x: 150, y: 0, z: -60 } },
      ],
      hunger_per_s: 0.05,
      thirst_per_s: 0.08,
    },
    characters,
    script,
  };
}
