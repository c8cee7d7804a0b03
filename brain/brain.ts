import { AgentStore, DEFAULT_MAX_AGENTS, DEFAULT_STALE_AFTER_S } from './agents.js';
import { TickCtx, type Switches } from './behaviours/context.js';
import { decide, explanation, overlay, overlayExplained } from './behaviours/dispatch.js';
import { tableFor, type Table } from './behaviours/table.js';
import { WhyRecorder } from './behaviours/why.js';
import { policyOn } from './bundle.js';
import { Counters } from './counters.js';
import { mood, updateEmotions } from './emotions.js';
import { drawName, drawThemes } from './flavor.js';
import { framingOf } from './goals.js';
import { detach, EV, forget, observe, remember, summarize, type MemorySummary } from './memory.js';
import { applyProfileTraits, sampleSessionS, sampleTraits, temper } from './population.js';
import { seedFor } from './prng.js';
import { newRhythm } from './conduct.js';
import { closeDeadContact, CONTACT_MEMORY_S, recordContact } from './reactive/investigate.js';
import { perceive, withoutSelf, type Perception } from './reactive/perception.js';
import { alignmentOf, mapSurvivorOf, survivorOf, type Alignment } from './roster.js';
import { Squads, type Squad } from './squads.js';
import type { Goal, Mode } from './modes.js';
import { AgentState, detachNums } from './state.js';
import { toPlain, type PlainAgent } from './state-schema.js';
import { exportAgents, parseState, type BrainState } from './state-io.js';
import type { ConfigBundle, Intent, MapSurvivor, Profile, Role, Survivor, TickRequest, TickResponse, Traits } from './types.js';

export interface BrainOptions {
  /** Most agents whose state is kept; the least recently seen are evicted beyond it. Default 10,000. */
  maxAgents?: number;
  /** An agent ticking more than this many game seconds after its own last tick starts afresh. Default 3600. */
  staleAfterS?: number;
}

const OPTION_KEYS: ReadonlyArray<keyof BrainOptions> = ['maxAgents', 'staleAfterS'];

/** What the future dialogue tier knows about a character. A copy: safe to keep and serialise. */
export interface Persona {
  agent: number;
  name: string;
  role: string;
  alignment: Alignment;
  traits: Traits;
  /** Empty when the flavor policy or flavor.enabled is off. */
  themes: string[];
  /** flavor.global, or null when flavor is off. */
  global: string | null;
  goal: Goal;
  state: Mode;
  emotion: { fear: number; anger: number; calm: number; mood: string };
  fatigue: number;
  /** Empty when the memory policy is off. */
  memory: MemorySummary;
}

function switchesOf(b: ConfigBundle): Switches {
  const knowledge = policyOn(b, 'game_knowledge');
  return {
    human: policyOn(b, 'human_factors'),
    goals: policyOn(b, 'global_goals'),
    knowledge,
    squads: policyOn(b, 'squads'),
    memory: policyOn(b, 'memory'),
    emotions: policyOn(b, 'emotional_events'),
    emotes: policyOn(b, 'emotes'),
    flavor: policyOn(b, 'flavor') && b.flavor.enabled,
    allowNames: b.speech.phrase_cache.allow_player_names,
    framing: knowledge ? framingOf(b.game) : framingOf(null),
  };
}

const NO_PROFILE: Profile = {};

/** The module's own copy of a role: a string from the request is young and must not be kept. */
function ownRole(role: Role): Role {
  switch (role) {
    case 'bandit':
      return 'bandit';
    case 'guard':
      return 'guard';
    case 'trader':
      return 'trader';
    default:
      return 'survivor';
  }
}

/**
 * The decision engine for one bundle: perception in, intents out. Pure and deterministic:
 * time comes only from the snapshot, randomness only from a PRNG seeded by the bundle and
 * the agent. Agents interact only through squads, in the order their ticks arrive.
 */
export class Brain {
  private bundle: ConfigBundle;
  private sw: Switches;
  private readonly agents: AgentStore;
  private readonly squads = new Squads();
  private readonly counters = new Counters();
  /** Reused by every tick: tick is synchronous and nothing keeps a reference past it. */
  private readonly c: TickCtx;
  private readonly p: Perception;
  /** The decision table for the bundle's policies. */
  private table: Table;
  /** Made on the first explained tick and reused: a brain never asked to explain has none. */
  private why: WhyRecorder | null = null;

  constructor(bundle: ConfigBundle, options: BrainOptions = {}) {
    for (const key of Object.keys(options)) {
      if (!OPTION_KEYS.includes(key as keyof BrainOptions)) {
        const near = OPTION_KEYS.find((k) => k.toLowerCase() === key.toLowerCase() || k.toLowerCase().startsWith(key.toLowerCase().slice(0, 6)));
        throw new RangeError(`unknown Brain option "${key}"${near ? ` (did you mean "${near}"?)` : ''}; known: ${OPTION_KEYS.join(', ')}`);
      }
    }
    const maxAgents = options.maxAgents ?? DEFAULT_MAX_AGENTS;
    const staleAfterS = options.staleAfterS ?? DEFAULT_STALE_AFTER_S;
    if (!Number.isSafeInteger(maxAgents) || maxAgents < 1) throw new RangeError(`maxAgents must be a positive integer, got ${maxAgents}`);
    if (!(staleAfterS > 0)) throw new RangeError(`staleAfterS must be a positive number of game seconds, got ${staleAfterS}`);
    this.bundle = bundle;
    this.sw = switchesOf(bundle);
    this.table = tableFor(this.sw);
    this.c = new TickCtx(this.squads, this.counters, this.sw);
    this.p = this.c.p;
    this.agents = new AgentStore(maxAgents, staleAfterS, (a) => {
      this.squads.leave(a);
      detach(a);
      detachNums(a);
    });
  }

  get version(): number {
    return this.bundle.version;
  }

  /** Swaps the bundle; agents keep who they are (traits, themes, session), policies apply from the next tick. */
  setBundle(bundle: ConfigBundle): void {
    this.bundle = bundle;
    this.sw = switchesOf(bundle);
    this.table = tableFor(this.sw);
    this.c.sw = this.sw;
  }

  get agentCount(): number {
    return this.agents.size;
  }

  /**
   * One decision. `explain`: the reply also carries `why` (mode, goal, the options scored, the
   * deciding rule), recorded as the decision is made; the decision itself is the same either way.
   */
  tick(request: TickRequest, explain = false): TickResponse {
    const s = request.snapshot;
    const prof = request.profile ?? NO_PROFILE;
    const sw = this.sw;
    const time = s.time_s;
    const st = s.self_state;
    const pos = st.pos;
    const id = s.agent as number;
    const given = s.targets;

    let a = this.agents.current(id, time);
    const first = a === undefined;
    if (a === undefined) a = this.spawn(id, time, prof, pos.x, pos.y, pos.z);
    const dt = first || time < a.lastT ? 0 : time - a.lastT;
    if (prof.role !== undefined && prof.role !== a.role) a.role = ownRole(prof.role);
    if (prof.name !== undefined && prof.name !== a.name) a.name = prof.name;
    if (applyProfileTraits(a.traits, prof)) temper(a);
    if (prof.coward !== undefined) a.cowardFlag = prof.coward ? 1 : 0;

    const p = this.p;
    perceive(st, given, id, a.health, first, p);
    const targets = p.self ? withoutSelf(given, id) : given;
    const threat = p.threat;
    if (threat !== null) {
      if (!a.sawHostile) {
        this.counters.bump('snap');
        remember(a, EV.spotted, time, threat.id);
      }
      recordContact(a, threat, time);
    }
    a.sawHostile = threat !== null;
    // Seen dead, the contact is over: nothing to investigate, watch or flee from there.
    if (p.dead > 0 && a.contact) closeDeadContact(a, targets);

    if (sw.memory) {
      const heard = observe(a, time, targets, s.heard, threat, sw.allowNames);
      if (heard > 0) this.counters.bump('heard', heard);
      if (p.damage > 0) remember(a, EV.damaged, time, p.damage);
    } else if (a.mem !== null) forget(a);

    let sq: Squad | null = null;
    let lostMate = false;
    let adopted = false;
    // Most characters are in no squad: skip the lookup when there is none to join or leave.
    if (sw.squads && st.health > 0 && (s.squad !== undefined || a.squad !== '')) {
      sq = this.squads.join(a, s.squad ?? '', first);
      if (sq !== null) {
        if (a.lossSeq < sq.lossSeq) {
          lostMate = true;
          a.lossSeq = sq.lossSeq;
          remember(a, EV.lost_squadmate, time, 0);
        }
        if (threat !== null) this.squads.report(sq, a, threat, time);
        else if (this.squads.adoptContact(sq, a, time, CONTACT_MEMORY_S, sw.human)) {
          adopted = true;
          this.counters.bump('squad');
          remember(a, EV.squad_contact, time, a.contactId);
        }
      }
    } else if (!sw.squads && a.squad !== '') {
      this.squads.leave(a);
      a.squad = '';
    }

    if (sw.emotions) updateEmotions(a, p, dt, lostMate, sw.human ? a.fatigue : 0);

    const c = this.c;
    c.s = s;
    c.st = st;
    c.targets = targets;
    c.prof = prof;
    c.a = a;
    c.sq = sq;
    c.first = first;
    c.dt = dt;
    c.time = time;
    c.wasMode = a.mode;
    c.posture = 'standing';
    c.speed = null;
    c.mode = 'idle';
    c.away = false;
    c.heard = false;
    c.adopted = adopted;
    const why = explain ? (this.why ??= new WhyRecorder()) : null;
    if (why !== null) why.begin();
    c.why = why;
    const out: Intent[] = [];
    const table = this.table;
    const decided = decide(c, out, table.decideIds);
    let rule = '';
    if (why === null) overlay(c, out, table.overlayIds);
    else rule = overlayExplained(c, out, table.overlayIds, decided);
    const mode = c.mode;
    const wasMode = c.wasMode;

    a.mode = mode;
    // Still in a squad at this point means in the one joined above (dying or logging off left it).
    const mine = a.squad === '' ? undefined : (sq ?? this.squads.of(a));
    if (mine !== undefined) {
      if (mode !== wasMode) this.squads.modeChanged(mine, a);
      this.squads.moved(mine, a, pos.x, pos.y, pos.z, time);
    }
    a.lastT = time;
    a.ticks++;
    a.health = st.health;
    a.blood = st.blood;
    a.x = pos.x;
    a.y = pos.y;
    a.z = pos.z;
    if (why === null) return { agent: id, posture: c.posture, intents: out };
    return { agent: id, posture: c.posture, intents: out, why: explanation(c, why, rule) };
  }

  /**
   * First tick of an agent. Draws happen in a fixed order whatever the policies (traits,
   * session, name, themes), so switching a subsystem off never reshuffles the others' draws.
   */
  private spawn(id: number, time: number, prof: Profile, x: number, y: number, z: number): AgentState {
    const b = this.bundle;
    const holder = { rng: seedFor(b.flavor.seed, id) };
    const traits = sampleTraits(b.population, holder);
    const a = new AgentState(id, holder.rng, time, traits);
    temper(a);
    a.sessionS = sampleSessionS(b.population, a);
    a.name = drawName(a);
    a.themes = drawThemes(b.flavor, a);
    a.anchor = true;
    a.anchorX = x;
    a.anchorY = y;
    a.anchorZ = z;
    a.x = x;
    a.y = y;
    a.z = z;
    if (prof.name !== undefined) a.name = prof.name;
    // A spawn is no subsystem's event: the activity feed counts it whatever the policy.
    this.counters.bump('spawn');
    newRhythm(a, time);
    this.agents.set(a);
    return a;
  }

  /** Telemetry counters by kind since the last drain: spawn, snap, squad, heard, plan, afk, logoff, block, emote. */
  drainEvents(): Record<string, number> {
    return this.counters.drain();
  }

  /** One row per known agent, ordered by agent id. */
  roster(): Survivor[] {
    const rows: Survivor[] = [];
    for (const a of this.agents.values()) rows.push(survivorOf(a));
    return rows.sort((x, y) => x.agent - y.agent);
  }

  /** The roster with positions, for the live map (the sidecar samples it at most every few seconds), ordered by agent id. */
  mapRoster(): MapSurvivor[] {
    const rows: MapSurvivor[] = [];
    for (const a of this.agents.values()) rows.push(mapSurvivorOf(a));
    return rows.sort((x, y) => x.agent - y.agent);
  }

  /** Who a character is, for the dialogue tier; null for an agent this brain has not seen (or has evicted). */
  persona(agentId: number): Persona | null {
    const a = this.agents.peek(agentId);
    if (a === undefined) return null;
    const flavor = this.sw.flavor;
    return {
      agent: a.id,
      name: a.name,
      role: a.role,
      alignment: alignmentOf(a),
      traits: { ...a.traits },
      themes: flavor ? [...a.themes] : [],
      global: flavor ? this.bundle.flavor.global : null,
      goal: a.goal,
      state: a.mode,
      emotion: { fear: a.fear, anger: a.anger, calm: a.calm, mood: mood(a) },
      fatigue: a.fatigue,
      memory: summarize(this.sw.memory ? a : null),
    };
  }

  /** Every agent's state as a versioned JSON-serialisable document (see state-io.ts). */
  exportState(): BrainState {
    return exportAgents(this.agents.values());
  }

  /**
   * The agents of exportState in batches of `size`, each agent copied when its batch is
   * taken, so a caller can yield to other work between batches (a whole export of 10,000
   * agents takes a few hundred milliseconds). Who is exported is fixed at the first batch.
   */
  *exportBatches(size = 500): Generator<PlainAgent[]> {
    const all = [...this.agents.values()];
    for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size).map(toPlain);
  }

  /**
   * Replaces all agent state with a document from exportState. Validated whole first: an
   * invalid document throws BrainStateError and leaves the current state untouched. Agents
   * beyond maxAgents are dropped, least recently ticked first.
   */
  importState(state: unknown): void {
    const agents = parseState(state);
    this.agents.clear();
    this.squads.clear();
    agents.sort((x, y) => x.lastT - y.lastT || x.id - y.id);
    for (const a of agents) {
      temper(a);
      this.agents.set(a);
    }
    for (const a of this.agents.values()) {
      const squad = a.squad;
      if (squad !== '' && !a.loggedOff) this.squads.join(a, squad, false);
    }
  }
}
