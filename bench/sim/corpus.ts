import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Brain, DEFAULT_BUNDLE, POLICY_KEYS, type ConfigBundle, type PolicyKey } from '../../brain/index.js';
import { workload } from '../brain-micro.js';
import { Simulation } from './engine.js';
import { inProcessTransport } from './inprocess.js';
import { loadScenario, scenarioBundle } from './run.js';
import type { Scenario } from './scenario.js';
import { ambush30, crowd, probe, quiet, scaled, waves } from './standard.js';

/**
 * The replay corpus: every scenario file (but one), the standard believability runs at a small scale,
 * and the `bench brain` traffic under every policy set that changes the decision, each reduced
 * to the number of replies and a SHA-256 of their bytes in order. A refactor of the brain that
 * changes no behaviour leaves every digest as it was (test/brain/corpus.test.ts holds them).
 */

export interface CorpusEntry {
  ticks: number;
  sha256: string;
}

const SCENARIO_DIR = fileURLToPath(new URL('../../../bench/sim/scenarios/', import.meta.url));
/** The standard runs at this scale: every kind of situation, a few seconds of CPU. */
const STANDARD_SCALE = 0.05;
const MICRO_AGENTS = 60;
const MICRO_TICKS = 100;
/** Replayed whole by test/sim/scenarios.test.ts already, and 30,000 ticks: the standard crowd stands in for it here. */
const SKIP = new Set(['crowd-50.json']);

async function simulate(scenario: Scenario): Promise<CorpusEntry> {
  const transport = inProcessTransport(scenarioBundle(scenario));
  const h = createHash('sha256');
  let ticks = 0;
  const sim = new Simulation(
    scenario,
    transport,
    (line) => {
      h.update(line.reply);
      h.update('\n');
      ticks++;
    },
    { keep: false },
  );
  await sim.run();
  return { ticks, sha256: h.digest('hex') };
}

function policySet(off: readonly PolicyKey[]): ConfigBundle {
  const b = structuredClone(DEFAULT_BUNDLE);
  b.policy = Object.fromEntries(POLICY_KEYS.map((k) => [k, !off.includes(k)]));
  return b;
}

function micro(bundle: ConfigBundle): CorpusEntry {
  const brain = new Brain(bundle);
  const h = createHash('sha256');
  const requests = workload(MICRO_AGENTS, MICRO_TICKS);
  for (const r of requests) {
    h.update(JSON.stringify(brain.tick(r)));
    h.update('\n');
  }
  h.update(JSON.stringify(brain.drainEvents()));
  return { ticks: requests.length, sha256: h.digest('hex') };
}

/** Every corpus by name, in a fixed order. */
export async function corpusDigests(): Promise<Record<string, CorpusEntry>> {
  const out: Record<string, CorpusEntry> = {};
  for (const f of readdirSync(SCENARIO_DIR)
    .filter((x) => x.endsWith('.json') && !SKIP.has(x))
    .sort()) {
    out[`scenario/${f}`] = await simulate(loadScenario(join(SCENARIO_DIR, f)));
  }
  const z = scaled(STANDARD_SCALE);
  for (const [name, build] of Object.entries({ crowd, waves, quiet, 'ambush-30': ambush30, probe })) out[`standard/${name}`] = await simulate(build(z));
  out['micro/all-on'] = micro(policySet([]));
  out['micro/all-off'] = micro(policySet(POLICY_KEYS));
  for (const k of POLICY_KEYS) out[`micro/without-${k}`] = micro(policySet([k]));
  out['micro/human-only'] = micro(policySet(POLICY_KEYS.filter((k) => k !== 'human_factors')));
  out['micro/goals-squads-only'] = micro(policySet(POLICY_KEYS.filter((k) => k !== 'global_goals' && k !== 'squads')));
  return out;
}
