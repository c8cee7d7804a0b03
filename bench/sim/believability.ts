import { bravery } from '../../brain/population.js';
import type { TickResponse } from '../../brain/types.js';
import type { Snapshot } from '../../brain/types.js';
import { Simulation } from './engine.js';
import { FigureCounter, type Figures } from './figures.js';
import { inProcessTransport } from './inprocess.js';
import { scenarioBundle } from './run.js';
import type { Scenario } from './scenario.js';
import { ambush30, crowd, FULL_SIZES, probe, quiet, scaled, waves, type StandardSizes } from './standard.js';

/**
 * `brainstem bench believability`: runs the standard scenarios through the simulator (brain
 * in-process, the sidecar's validation included) and reports every figure of the behaviour
 * table per scenario, beside its goal.
 */

export interface ProbeFigures {
  characters: number;
  distinct_signatures: number;
  modal_share: number;
  bravery_engage_correlation: number | null;
}

export interface BelievabilityResult {
  scale: number;
  probe: ProbeFigures;
  scenarios: Record<string, Figures>;
  goals: GoalResult[];
  met: number;
  total: number;
  /** The second table (believable behaviour II). */
  goals_ii: GoalResult[];
  met_ii: number;
  total_ii: number;
}

/** A figure's goal: a bound on one number, of the probe or of some standard runs. */
export interface Goal {
  id: string;
  label: string;
  /** What recorded runs showed before this work, as text. */
  before: string;
  goal: string;
  /** The probe's figure it reads, or else the runs' figure (in `runs`, default all four). */
  probe?: keyof Omit<ProbeFigures, 'characters'>;
  key?: keyof Figures;
  runs?: readonly string[];
  ok(v: number): boolean;
}

export interface GoalResult {
  id: string;
  label: string;
  before: string;
  goal: string;
  /** Per scenario (or `probe`); null = not measured in that run (no such event happened). */
  values: Record<string, number | null>;
  met: boolean;
}

export const RUNS = ['crowd', 'waves', 'quiet', 'ambush-30'] as const;

export const GOALS: Goal[] = [
  { id: 'signatures', label: 'distinct reply signatures, one hostile at 25 m', before: '1', goal: '>= 3', probe: 'distinct_signatures', ok: (v) => v >= 3 },
  { id: 'modal_share', label: 'modal signature share, one hostile at 25 m', before: '100%', goal: '<= 0.7', probe: 'modal_share', ok: (v) => v <= 0.7 },
  { id: 'bravery', label: 'bravery-engage correlation', before: '-', goal: '> 0.5', probe: 'bravery_engage_correlation', ok: (v) => v > 0.5 },
  {
    id: 'goal_changes',
    label: 'goal changes per character-minute outside combat',
    before: '3.2',
    goal: '<= 0.3',
    key: 'goal_changes_per_min',
    ok: (v) => v <= 0.3,
  },
  { id: 'u_turns', label: 'U-turns per character-hour outside combat', before: '135', goal: '<= 2', key: 'u_turns_per_hour', ok: (v) => v <= 2 },
  { id: 'flight', label: 'median flight (s)', before: '<= 1', goal: '>= 5', key: 'median_flight_s', ok: (v) => v >= 5 },
  { id: 'back_to_fled', label: 'flee -> investigate same contact', before: '772', goal: '0', key: 'flee_to_investigate_same_contact', ok: (v) => v === 0 },
  {
    id: 'engage_moving',
    label: 'engage ticks with movement (non-holding)',
    before: '0',
    goal: '>= 0.3',
    key: 'engage_ticks_moving_share',
    ok: (v) => v >= 0.3,
  },
  { id: 'fire_pauses', label: 'fire pauses per 10 s of engagement', before: '0', goal: '>= 1', key: 'fire_pauses_per_10s', ok: (v) => v >= 1 },
  { id: 'shooters', label: 'shooters per target per squad (max)', before: '14', goal: '<= 3', key: 'max_shooters_per_target_per_squad', ok: (v) => v <= 3 },
  {
    id: 'alike',
    label: 'share of changes on ticks where >= 5 switch alike',
    before: '0.095-0.45',
    goal: '<= 0.1',
    key: 'alike_change_share',
    ok: (v) => v <= 0.1,
  },
  { id: 'investigations', label: 'investigations that reach the spot', before: '0', goal: '>= 0.7', key: 'investigations_reached_share', ok: (v) => v >= 0.7 },
  { id: 'statues', label: 'non-away stretches, identical reply > 60 s', before: '100 in 3 h', goal: '0', key: 'statue_stretches', ok: (v) => v === 0 },
  {
    id: 'emotes',
    label: 'emotes per character-hour (quiet run)',
    before: '0',
    goal: '2-6',
    key: 'emotes_per_hour',
    runs: ['quiet'],
    ok: (v) => v >= 2 && v <= 6,
  },
  { id: 'heard', label: 'heard lines answered by a turn within 2 s', before: '~base rate', goal: '>= 0.5', key: 'heard_turn_share', ok: (v) => v >= 0.5 },
  { id: 'logoffs', label: 'logoffs after >= 10 s standing still', before: '0.24', goal: '>= 0.8', key: 'logoffs_wound_down_share', ok: (v) => v >= 0.8 },
  {
    id: 'squad_distance',
    label: 'median distance to squad centre outside combat (m)',
    before: '108',
    goal: '<= 25',
    key: 'median_squad_distance_m',
    ok: (v) => v <= 25,
  },
];

/** The second table: no constants where people vary, and squads that talk. */
export const GOALS_II: Goal[] = [
  {
    id: 'flight_modal',
    label: 'share of flights with the most common length (0.5 s bins)',
    before: '100% (8.0 s)',
    goal: '<= 0.25',
    key: 'flight_modal_share',
    ok: (v) => v <= 0.25,
  },
  {
    id: 'squad_reaction',
    label: "squadmates' reaction after a member's first sighting, median (s)",
    before: '0.0',
    goal: '0.3-2',
    key: 'median_squad_reaction_s',
    ok: (v) => v >= 0.3 && v <= 2,
  },
  {
    id: 'far_first_shot',
    label: 'first shot after first sight of a hostile at >= 100 m, median (s)',
    before: '-',
    goal: '>= 1',
    key: 'median_far_first_shot_s',
    ok: (v) => v >= 1,
  },
  {
    id: 'investigations_started',
    label: 'started investigations reaching their spot',
    before: '0 (crowd)',
    goal: '>= 0.6',
    key: 'investigations_started_reached_share',
    ok: (v) => v >= 0.6,
  },
  {
    id: 'emote_modal',
    label: 'share of the most common emote, crowd run',
    before: '100%',
    goal: '<= 0.5',
    key: 'emote_modal_share',
    runs: ['crowd'],
    ok: (v) => v <= 0.5,
  },
  {
    id: 'follow_flips',
    label: 'traveling <-> idle-with-squad flips per character-hour',
    before: '73',
    goal: '<= 15',
    key: 'follow_flips_per_hour',
    ok: (v) => v <= 15,
  },
  {
    id: 'toward_threat',
    label: 'flight bearings within 90 deg of the fled threats',
    before: 'occur',
    goal: '0',
    key: 'flight_bearings_toward_threat',
    ok: (v) => v === 0,
  },
];

/** Runs a scenario through the simulator with a fresh in-process brain, counting figures. */
export async function measure(
  scenario: Scenario,
): Promise<{ figures: Figures; brain: ReturnType<typeof inProcessTransport>['brain']; replies: Map<number, string[]> }> {
  const transport = inProcessTransport(scenarioBundle(scenario));
  const counter = new FigureCounter(scenario.tick_hz);
  const replies = new Map<number, string[]>();
  const keep = scenario.name === 'probe';
  const sim = new Simulation(
    scenario,
    transport,
    (line) => {
      const s = (JSON.parse(line.request) as { snapshot: Snapshot }).snapshot;
      const reply = JSON.parse(line.reply) as TickResponse;
      counter.add(line.t, s, reply, line.reply);
      if (keep) {
        let list = replies.get(reply.agent);
        if (list === undefined) replies.set(reply.agent, (list = []));
        list.push(signatureOf(reply));
      }
    },
    { keep: false },
  );
  await sim.run();
  return { figures: counter.finish(), brain: transport.brain, replies };
}

/** What a probe reply shows of the character's style: posture, what it does, fire, movement speed. */
function signatureOf(r: TickResponse): string {
  let out = r.posture;
  for (const i of r.intents) {
    if (i.kind === 'Engage') out += ` Engage:${i.fire}`;
    else if (i.kind === 'MoveTo') out += ` MoveTo:${i.speed}`;
    else if (i.kind === 'Idle') out += ` Idle:${i.reason}`;
    else if (i.kind !== 'Face' && i.kind !== 'Say') out += ` ${i.kind}`;
  }
  return out;
}

function pearson(xs: number[], ys: number[]): number | null {
  const n = xs.length;
  if (n < 3) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : Math.round((sxy / Math.sqrt(sxx * syy)) * 1000) / 1000;
}

export async function probeFigures(z: StandardSizes): Promise<ProbeFigures> {
  const { brain, replies } = await measure(probe(z));
  const counts = new Map<string, number>();
  const brave: number[] = [];
  const engaged: number[] = [];
  for (const [agent, list] of replies) {
    const sig = list.join('|');
    counts.set(sig, (counts.get(sig) ?? 0) + 1);
    const persona = brain.persona(agent);
    if (persona === null) continue;
    brave.push(bravery(persona.traits));
    engaged.push(list.filter((x) => x.includes('Engage:true')).length / list.length);
  }
  const modal = Math.max(...counts.values());
  return {
    characters: replies.size,
    distinct_signatures: counts.size,
    modal_share: Math.round((modal / replies.size) * 1000) / 1000,
    bravery_engage_correlation: pearson(brave, engaged),
  };
}

export function judge(probe: ProbeFigures, scenarios: Record<string, Figures>, goals: readonly Goal[] = GOALS): GoalResult[] {
  return goals.map((g) => {
    const values: Record<string, number | null> = {};
    if (g.probe !== undefined) values.probe = probe[g.probe];
    else for (const run of g.runs ?? RUNS) if (scenarios[run] !== undefined) values[run] = scenarios[run][g.key!] as number | null;
    const measured = Object.values(values).filter((v): v is number => v !== null);
    return { id: g.id, label: g.label, before: g.before, goal: g.goal, values, met: measured.length > 0 && measured.every((v) => g.ok(v)) };
  });
}

/** Every standard scenario at `scale` (1 = the full runs: 50 characters, 5 min, 10 min, 3 h, 200 probes). */
export async function runBelievability(scale = 1, only?: readonly string[]): Promise<BelievabilityResult> {
  const z = scale === 1 ? FULL_SIZES : scaled(scale);
  const builders: Record<string, (z: StandardSizes) => Scenario> = { crowd, waves, quiet, 'ambush-30': ambush30 };
  const scenarios: Record<string, Figures> = {};
  for (const [name, build] of Object.entries(builders)) {
    if (only !== undefined && !only.includes(name)) continue;
    scenarios[name] = (await measure(build(z))).figures;
  }
  const pf = await probeFigures(z);
  const goals = judge(pf, scenarios);
  const goalsII = judge(pf, scenarios, GOALS_II);
  return {
    scale,
    probe: pf,
    scenarios,
    goals,
    met: goals.filter((g) => g.met).length,
    total: goals.length,
    goals_ii: goalsII,
    met_ii: goalsII.filter((g) => g.met).length,
    total_ii: goalsII.length,
  };
}

function fmt(v: number | null): string {
  if (v === null) return '-';
  return Number.isInteger(v) ? String(v) : v.toFixed(Math.abs(v) < 10 ? 2 : 1);
}

function table(goals: readonly GoalResult[], cols: readonly string[]): string[] {
  const lines = [`| figure | before | ${cols.join(' | ')} | goal | met |`, `|---|--:|${cols.map(() => '--:').join('|')}|--:|:-:|`];
  for (const g of goals) {
    const cells = cols.map((c) => (c in g.values ? fmt(g.values[c] ?? null) : ''));
    lines.push(`| ${g.label} | ${g.before} | ${cells.join(' | ')} | ${g.goal} | ${g.met ? 'yes' : 'no'} |`);
  }
  return lines;
}

export function formatTable(r: BelievabilityResult): string {
  const cols = ['probe', ...Object.keys(r.scenarios)];
  const lines = table(r.goals, cols);
  lines.push('', 'Believable behaviour II', '', ...table(r.goals_ii, Object.keys(r.scenarios)));
  lines.push(
    `\n${r.met} of ${r.total} goals met, ${r.met_ii} of ${r.total_ii} of the second table (scale ${r.scale}); ticks: ${Object.keys(r.scenarios)
      .map((c) => `${c} ${r.scenarios[c]!.ticks}`)
      .join(', ')}`,
  );
  return lines.join('\n');
}
