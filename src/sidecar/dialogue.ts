import { ROLES, type Persona as BrainPersona, type Role, type TickRequest, type TickResponse } from '../../brain/index.js';
import type { DialogueContext, HeardLine, NearbyPlayer, NotableEvent, Persona } from '../dialogue/context.js';
import type { DialogueTier } from '../dialogue/tier.js';

/**
 * Joins the dialogue tier to the tick path. After the brain answers a tick, `apply` builds
 * the tier's DialogueContext from the snapshot and the reply and appends a Say the tier has
 * ready (after the brain's own intents). Nothing here waits: the tier answers synchronously
 * and asks its model in the background.
 *
 * The persona (name, goal, mood, memory) is the costly part, so it is resolved lazily: the
 * tier reads it only when it starts a line, a few times a minute per character at most.
 * Inline, it comes straight from the Brain; with workers, the worker sends it with the reply
 * of the ticks flagged by `wantsPersona` (a player in range or speech heard), and the last
 * one received per agent is kept here.
 */

/** Players within this distance make a tick worth a persona from a worker (the tier's default range). */
export const PERSONA_RANGE_M = 20;

/**
 * A persona is reused for this many game seconds: the tier may read it on every tick while a
 * line is owed and the model is busy, and who a character is changes far slower than that.
 */
export const PERSONA_TTL_S = 5;
const MAX_CACHED_PERSONAS = 10_000;

const GOAL_WORDS: Record<string, string> = {
  none: '',
  find_water: 'find clean water',
  find_food: 'find food',
  find_medical: 'find medical supplies',
  loot: 'scavenge for supplies',
  guard: 'guard this place',
  roam: 'look around the area',
  regroup: 'regroup with the squad',
};

const DOING_WORDS: Record<string, string> = {
  idle: 'standing around',
  patrolling: 'patrolling',
  engaging: 'fighting',
  fleeing: 'running away',
  investigating: 'checking out a noise',
  traveling: 'on the move',
  roaming: 'wandering around',
  guarding: 'keeping watch',
  regrouping: 'heading back to the squad',
  afk: 'resting',
  on_break: 'taking a break',
  logged_off: 'gone',
  dead: 'dead',
};

const ROLE_SET: ReadonlySet<string> = new Set(ROLES);

/** A few plain sentences from the brain's memory summary, for the prompt. */
function memoryWords(p: BrainPersona, time: number): string {
  const m = p.memory;
  const parts: string[] = [];
  const named = m.players_met.filter((x) => x.name !== null).slice(0, 3);
  if (named.length > 0) parts.push(`Met ${named.map((x) => (x.meetings > 1 ? `${x.name} (${x.meetings} times)` : x.name)).join(', ')}.`);
  else if (m.players_met.length > 0) parts.push(`Met ${m.players_met.length} stranger${m.players_met.length === 1 ? '' : 's'}.`);
  if (m.last_contact) parts.push(`Last saw a hostile ${m.last_contact.kind} ${Math.max(0, Math.round(time - m.last_contact.t))} s ago.`);
  const kinds: string[] = [];
  for (const e of m.recent_events) if (!kinds.includes(e.kind) && kinds.push(e.kind) >= 3) break;
  if (kinds.length > 0) parts.push(`Recently: ${kinds.join(', ').replace(/_/g, ' ')}.`);
  return parts.join(' ');
}

/** What the tier needs of a character, mapped from Brain.persona(). Small enough to cross from a worker. */
export interface DialoguePersona {
  persona: Persona;
  doing: string;
}

export function dialoguePersona(p: BrainPersona, time: number): DialoguePersona {
  const intensity =
    p.emotion.mood === 'afraid'
      ? p.emotion.fear
      : p.emotion.mood === 'angry'
        ? p.emotion.anger
        : p.emotion.mood === 'calm'
          ? p.emotion.calm
          : 1 - p.emotion.calm;
  return {
    persona: {
      name: p.name,
      role: (ROLE_SET.has(p.role) ? p.role : 'survivor') as Role,
      traits: p.traits,
      themes: p.themes,
      goal: GOAL_WORDS[p.goal] ?? '',
      emotion: { name: p.emotion.mood, intensity: Math.round(intensity * 100) / 100 },
      memory: memoryWords(p, time),
    },
    doing: DOING_WORDS[p.state] ?? '',
  };
}

/** Whether a tick could make the tier start a line (so a worker should send the persona along). */
export function wantsPersona(request: TickRequest): boolean {
  const s = request.snapshot;
  if (s.heard !== undefined && s.heard.length > 0) return true;
  const targets = s.targets;
  const pos = s.self_state.pos;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    if (t.kind !== 'player' || !t.visible) continue;
    const dx = t.pos.x - pos.x;
    const dz = t.pos.z - pos.z;
    if (dx * dx + dz * dz <= PERSONA_RANGE_M * PERSONA_RANGE_M) return true;
  }
  return false;
}

const NO_HEARD: readonly HeardLine[] = [];
const NO_PLAYERS: readonly NearbyPlayer[] = [];
const EVENT_FLEEING: NotableEvent = { kind: 'fleeing' };
const EVENT_FIGHTING: NotableEvent = { kind: 'fighting' };

/** Where the wiring gets a character's persona: the inline Brain, or what workers sent. */
export type PersonaLookup = (agent: number, time: number) => DialoguePersona | null;

/**
 * The one DialogueContext object, reused tick after tick (the tier copies what it keeps).
 * persona and doing are getters: the Brain is asked only when the tier reads them.
 */
class TickContext implements DialogueContext {
  players: readonly NearbyPlayer[] = NO_PLAYERS;
  heard: readonly HeardLine[] = NO_HEARD;
  event: NotableEvent | null = null;
  combat: NotableEvent | null = null;
  agent = 0;
  time = 0;
  /** The tick's request, for the profile's name and role when the Brain has no persona. */
  request: TickRequest | null = null;
  private resolved: DialoguePersona | null = null;
  private looked = false;

  constructor(private readonly lookup: PersonaLookup) {}

  reset(request: TickRequest, agent: number, time: number): void {
    this.request = request;
    this.agent = agent;
    this.time = time;
    this.resolved = null;
    this.looked = false;
  }

  private resolve(): DialoguePersona | null {
    if (!this.looked) {
      this.looked = true;
      this.resolved = this.lookup(this.agent, this.time);
    }
    return this.resolved;
  }

  get persona(): Persona {
    const resolved = this.resolve();
    if (resolved !== null) return resolved.persona;
    const profile = this.request?.profile;
    return { name: profile?.name ?? '', role: profile?.role ?? 'survivor', traits: {}, themes: [], goal: '', emotion: null, memory: '' };
  }

  get doing(): string {
    return this.resolve()?.doing ?? '';
  }
}

export class DialogueWiring {
  readonly tier: DialogueTier;
  private readonly ctx: TickContext;
  private readonly personas = new Map<number, { at: number; value: DialoguePersona }>();
  private readonly players = new PlayerList();

  constructor(tier: DialogueTier, lookup: PersonaLookup) {
    this.tier = tier;
    this.ctx = new TickContext((agent, time) => {
      const hit = this.personas.get(agent);
      if (hit !== undefined && time >= hit.at && time - hit.at < PERSONA_TTL_S) return hit.value;
      const value = lookup(agent, time);
      if (value === null) return null;
      this.personas.delete(agent);
      this.personas.set(agent, { at: time, value });
      if (this.personas.size > MAX_CACHED_PERSONAS) this.personas.delete(this.personas.keys().next().value!);
      return value;
    });
  }

  /**
   * Whether a worker should send this agent's persona back with this tick: the tier may start
   * a line (wantsPersona) and the persona kept here is missing or older than PERSONA_TTL_S.
   */
  needsPersona(request: TickRequest): boolean {
    if (!wantsPersona(request)) return false;
    const hit = this.personas.get(request.snapshot.agent as number);
    const time = request.snapshot.time_s;
    return hit === undefined || time < hit.at || time - hit.at >= PERSONA_TTL_S;
  }

  /**
   * Runs the tier for one answered tick and appends its Say, if any, to the reply. Entering
   * a fight or a flight is a notable event: the tier tells it from staying in one (context
   * field `combat`), on the per-character state it reads anyway.
   */
  apply(request: TickRequest, response: TickResponse): void {
    const s = request.snapshot;
    const agent = response.agent;
    const intents = response.intents;
    let combat: NotableEvent | null = null;
    for (let i = 0; i < intents.length; i++) {
      const k = intents[i]!.kind;
      if (k === 'Logoff') {
        this.tier.forget(agent);
        if (this.personas.size > 0) this.personas.delete(agent);
        return;
      }
      if (k === 'Flee') combat = EVENT_FLEEING;
      else if (k === 'Engage' && combat === null) combat = EVENT_FIGHTING;
    }
    const ctx = this.ctx;
    ctx.reset(request, agent, s.time_s);
    ctx.combat = combat;
    ctx.heard = s.heard ?? NO_HEARD;
    ctx.players = this.players.of(request);
    const say = this.tier.onTick(agent, s.time_s, ctx);
    if (say !== null) intents.push(say);
  }
}

/**
 * The visible players of a tick, in one array and objects reused from tick to tick: the
 * context contract lets the caller reuse them (the tier copies what it keeps), and most
 * ticks of a busy server reach here only to find the character cannot speak right now.
 */
class PlayerList {
  private readonly pool: NearbyPlayer[] = [];
  private readonly list: NearbyPlayer[] = [];

  of(request: TickRequest): readonly NearbyPlayer[] {
    const s = request.snapshot;
    const targets = s.targets;
    const pos = s.self_state.pos;
    const list = this.list;
    let n = 0;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (t.kind !== 'player' || !t.visible) continue;
      const dx = t.pos.x - pos.x;
      const dy = t.pos.y - pos.y;
      const dz = t.pos.z - pos.z;
      let p = this.pool[n];
      if (p === undefined) this.pool.push((p = { id: 0, name: '', distance_m: 0 }));
      p.id = t.id as number;
      p.name = t.name ?? 'stranger';
      p.distance_m = Math.round(Math.sqrt(dx * dx + dy * dy + dz * dz) * 10) / 10;
      if (n < list.length) list[n] = p;
      else list.push(p);
      n++;
    }
    if (n === 0) return NO_PLAYERS;
    // Setting an array's length is a runtime call in V8: only when it shrinks.
    if (list.length > n) list.length = n;
    return list;
  }
}
