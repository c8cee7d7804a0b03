import { parseTickRequest, ROLES, TARGET_KINDS, type TickRequest } from '../../brain/index.js';
import { seededRandom } from '../../src/random.js';

/**
 * Realistic /tick bodies as data: a seeded mix of the situations of BRAIN.md (patrol, contact,
 * coward, wounded after a lost contact, a crowd of zombies and animals, speech heard), 0–8
 * targets each, spread over many agents. The same seed always gives the same ticks, so the
 * benchmark and the determinism tests replay identical traffic.
 */

export interface TickScenarioOptions {
  /** Distinct agents; agent ids run 1..agents. */
  agents: number;
  /** Ticks to produce; agents are visited round-robin, time advancing 0.25 s per round. */
  count: number;
  seed?: number;
}

const SITUATIONS = ['patrol', 'contact', 'coward', 'wounded', 'crowd', 'chatter'] as const;
type Situation = (typeof SITUATIONS)[number];
const NAMES = ['Mira', 'Alex', 'Jonas', 'Vera', 'Tomas', 'Lena', 'Oskar', 'Ida'];

export function generateTicks(options: TickScenarioOptions): Record<string, unknown>[] {
  const rand = seededRandom(options.seed ?? 1);
  const r = (min: number, max: number): number => Math.round((min + rand() * (max - min)) * 100) / 100;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const homes = Array.from({ length: options.agents }, () => ({ x: r(0, 15000), y: r(0, 40), z: r(0, 15000) }));
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < options.count; i++) {
    const agent = (i % options.agents) + 1;
    const round = Math.floor(i / options.agents);
    const home = homes[agent - 1]!;
    const situation: Situation = pick(SITUATIONS);
    const near = (d: number): { x: number; y: number; z: number } => ({ x: r(home.x - d, home.x + d), y: home.y, z: r(home.z - d, home.z + d) });
    const targetCount = situation === 'patrol' ? Math.floor(rand() * 2) : situation === 'crowd' ? 8 : 1 + Math.floor(rand() * 4);
    const targets = Array.from({ length: targetCount }, (_, k) => {
      const kind = situation === 'crowd' ? pick(['zombie', 'animal', 'zombie'] as const) : k === 0 ? 'player' : pick(TARGET_KINDS);
      const t: Record<string, unknown> = {
        id: 100000 + Math.floor(rand() * 5000),
        kind,
        pos: near(situation === 'contact' ? 150 : 40),
        hostile: situation !== 'patrol' && situation !== 'chatter' && (k === 0 || rand() < 0.5),
        visible: situation !== 'wounded' || k > 0,
      };
      if (kind === 'player') {
        t.name = pick(NAMES);
        t.health = r(20, 100);
      }
      return t;
    });
    const wounded = situation === 'wounded';
    const snapshot: Record<string, unknown> = {
      agent,
      time_s: 600 + round * 0.25,
      self_state: {
        pos: home,
        heading_deg: r(0, 360),
        health: wounded ? r(10, 59) : r(60, 100),
        blood: wounded ? r(1000, 2999) : r(3000, 5000),
        hunger: r(0, 100),
        thirst: r(0, 100),
        has_weapon: situation !== 'coward' || rand() < 0.5,
        ammo: situation === 'coward' ? 0 : Math.floor(rand() * 60),
      },
      targets,
    };
    if (situation === 'patrol' || rand() < 0.3) snapshot.route = [near(50), near(50)];
    if (rand() < 0.3) snapshot.poi = [{ id: `well_${agent % 50}`, kind: 'water', pos: near(100) }];
    if (situation === 'chatter') snapshot.heard = [{ from: 100000 + Math.floor(rand() * 5000), text: 'hey, you got any water?', at_s: 599.5 + round * 0.25 }];
    if (rand() < 0.25) snapshot.squad = `squad_${agent % 40}`;
    const profile: Record<string, unknown> =
      rand() < 0.2
        ? {}
        : {
            name: pick(NAMES),
            role: pick(ROLES),
            coward: situation === 'coward',
            traits: { openness: r(0, 1), neuroticism: r(0, 1), agreeableness: r(0, 1) },
          };
    out.push({ snapshot, profile });
  }
  return out;
}

/** Ticks as the brain takes them: the corpus validated, as the in-process benchmarks feed Brain.tick. */
export function parsedTicks(ticks: readonly Record<string, unknown>[]): TickRequest[] {
  return ticks.map((t) => {
    const parsed = parseTickRequest(t);
    if (!parsed.ok) throw new Error('the corpus holds an invalid tick');
    return parsed.request;
  });
}
