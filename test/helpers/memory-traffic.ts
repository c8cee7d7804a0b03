import { createHash } from 'node:crypto';
import { seededRandom } from '../../src/random.js';
import { workload } from '../../bench/brain-micro.js';
import type { ConfigBundle, TickRequest } from '../../brain/index.js';

/**
 * Traffic that exercises every path of memory (test/brain/memory-digests.test.ts): the
 * `bench brain` workload, and a seeded stress run with named players, more targets than a
 * ring holds, heard lines, clocks that step back a little (out of order), jump back
 * past the clock-reset rule and jump forward past staleness, export/import round trips and
 * the memory policy switched off and on. Each run is reduced to a SHA-256 of every reply and
 * every read (persona, export), so a build of the brain can be compared with another's: the
 * brain is passed in, as `bench brain --against` loads one.
 */

interface BrainLike {
  tick(r: TickRequest): unknown;
  persona(id: number): unknown;
  exportState(): unknown;
  importState(s: unknown): void;
  setBundle(b: ConfigBundle): void;
}

export interface BrainModule {
  Brain: new (bundle: ConfigBundle, options?: { staleAfterS?: number }) => BrainLike;
  DEFAULT_BUNDLE: ConfigBundle;
  POLICY_KEYS: readonly string[];
}

/** How often the run reads: `end` only at the end, `often` persona and export every few ticks as well. */
export type ReadPlan = 'end' | 'often';

function bundleOf(M: BrainModule, names: boolean, memory = true): ConfigBundle {
  const b = structuredClone(M.DEFAULT_BUNDLE);
  b.policy = Object.fromEntries(M.POLICY_KEYS.map((k) => [k, k === 'memory' ? memory : true]));
  b.speech.phrase_cache.allow_player_names = names;
  return b;
}

function readAll(brain: BrainLike, ids: readonly number[], h: ReturnType<typeof createHash>): void {
  for (const id of ids) h.update(JSON.stringify(brain.persona(id)) ?? 'undefined');
  h.update(JSON.stringify(brain.exportState()));
}

/** The `bench brain` traffic (60 agents × 100 ticks), all policies on. */
export function microDigest(M: BrainModule, names: boolean, plan: ReadPlan): string {
  const brain = new M.Brain(bundleOf(M, names));
  const h = createHash('sha256');
  const ids = Array.from({ length: 60 }, (_, i) => i + 1);
  const requests = workload(60, 100);
  requests.forEach((r, i) => {
    h.update(JSON.stringify(brain.tick(r)));
    if (plan === 'often' && i % 97 === 0) h.update(JSON.stringify(brain.persona(r.snapshot.agent as number)));
    if (plan === 'often' && i % 1201 === 0) h.update(JSON.stringify(brain.exportState()));
  });
  readAll(brain, ids, h);
  return h.digest('hex');
}

const KINDS = ['player', 'player', 'ai', 'zombie', 'animal'] as const;

/** A seeded stress run (`agents` characters, `ticks` ticks each, interleaved). */
export function stressDigest(M: BrainModule, seed: number, plan: ReadPlan, agents = 12, ticks = 300): string {
  const rnd = seededRandom(seed);
  const names = rnd() < 0.7;
  // Staleness after 120 game seconds, so long gaps drop agents (and their memory) mid-run.
  let brain = new M.Brain(bundleOf(M, names), { staleAfterS: 120 });
  const h = createHash('sha256');
  const ids = Array.from({ length: agents }, (_, i) => i + 1);
  const clock = ids.map(() => rnd() * 10);
  const playerName = (id: number): string | undefined => {
    const r = rnd();
    if (r < 0.3) return undefined;
    if (r < 0.4) return `a name longer than thirty-two characters, player ${id}`;
    return r < 0.5 ? `Renamed${id}` : `P${id}`;
  };
  for (let t = 0; t < ticks; t++) {
    for (const id of ids) {
      const r = rnd();
      // Mostly 2 Hz; sometimes a step back (out of order), a reset of the clock, a long gap.
      if (r < 0.01) clock[id - 1] = Math.max(0, clock[id - 1]! - 60 - rnd() * 100);
      else if (r < 0.03) clock[id - 1] = Math.max(0, clock[id - 1]! - rnd() * 5);
      else if (r < 0.035) clock[id - 1]! += 121 + rnd() * 50;
      else clock[id - 1]! += rnd() < 0.2 ? 2 + rnd() * 3 : 0.5;
      const many = rnd() < 0.08;
      const n = many ? 20 + Math.floor(rnd() * 40) : Math.floor(rnd() * 8);
      const targets = [];
      for (let i = 0; i < n; i++) {
        // Few distinct ids, so players are met again (and again after 60 s) and rings overflow.
        const tid = 100 + Math.floor(rnd() * (many ? 60 : 20));
        const name = playerName(tid);
        targets.push({
          id: tid,
          kind: KINDS[Math.floor(rnd() * KINDS.length)]!,
          pos: { x: rnd() * 200 - 100, y: 8, z: rnd() * 200 - 100 },
          hostile: rnd() < 0.4,
          visible: rnd() < 0.8,
          ...(name !== undefined ? { name } : {}),
        });
      }
      const time = clock[id - 1]!;
      const request = {
        snapshot: {
          agent: id,
          time_s: time,
          self_state: {
            pos: { x: id * 10, y: 8, z: 0 },
            heading_deg: 0,
            health: rnd() < 0.05 ? Math.floor(rnd() * 100) : 100,
            blood: 5000,
            hunger: 50,
            thirst: 50,
            has_weapon: id % 4 !== 0,
            ammo: 30,
          },
          targets,
          ...(rnd() < 0.15 ? { heard: [{ from: 100 + Math.floor(rnd() * 20), text: `line ${Math.floor(rnd() * 9)}`, at_s: time - rnd() }] } : {}),
          ...(id % 3 === 0 ? { squad: `s${id % 2}` } : {}),
        },
        profile: {},
      } as TickRequest;
      h.update(JSON.stringify(brain.tick(request)));
      if (plan === 'often' && rnd() < 0.05) h.update(JSON.stringify(brain.persona(id)));
    }
    if (t % 50 === 49) {
      // A round trip through the state file, into a new brain.
      const state = JSON.parse(JSON.stringify(brain.exportState())) as unknown;
      if (plan === 'often') h.update(JSON.stringify(state));
      brain = new M.Brain(bundleOf(M, names), { staleAfterS: 120 });
      brain.importState(state);
    }
    if (t % 70 === 69) brain.setBundle(bundleOf(M, names, false));
    if (t % 70 === 2) brain.setBundle(bundleOf(M, names, true));
    if (plan === 'often' && t % 10 === 0) readAll(brain, ids, h);
  }
  readAll(brain, ids, h);
  return h.digest('hex');
}

/** Every digest, by name: what test/fixtures/brain/memory-digests.json records. */
export function memoryDigests(M: BrainModule): Record<string, string> {
  const out: Record<string, string> = {};
  for (const plan of ['end', 'often'] as const) {
    out[`micro/names-off/${plan}`] = microDigest(M, false, plan);
    out[`micro/names-on/${plan}`] = microDigest(M, true, plan);
    for (const seed of [1, 2, 3, 4]) out[`stress/${seed}/${plan}`] = stressDigest(M, seed, plan);
  }
  return out;
}
