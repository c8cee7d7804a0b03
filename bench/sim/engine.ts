import type { HeardSpeech, Intent, Posture, TickRequest, TickResponse, Vec3, Why } from '../../brain/types.js';
import type { CharacterSpec, Expectation, Scenario, ScriptEvent } from './scenario.js';
import { flatDistance, lineOfSight, outsideWalls, stepToward, yawTo } from './world.js';

/** Sends one JSON tick body and returns the reply body as text, so replies can be compared byte for byte. */
export type TickTransport = (body: string) => Promise<{ status: number; body: string }>;

export const SPEED_MPS = { walk: 1.4, jog: 3.5, sprint: 6.0 } as const;
const DEFAULT_PERCEPTION_M = 300;
const FIRE_DAMAGE_PER_S = 8;
const FIRE_RANGE_M = 200;
/** Within this of a `water` or `food` point of interest a character drinks or eats (the brain arrives within 3 m). */
export const CONSUME_RADIUS_M = 4;
/** Thirst and hunger (need levels, 100 = parched) fall this fast while drinking or eating. */
export const DRINK_PER_S = 10;
export const EAT_PER_S = 5;

interface Character {
  spec: CharacterSpec;
  pos: Vec3;
  heading: number;
  health: number;
  blood: number;
  hunger: number;
  thirst: number;
  hasWeapon: boolean;
  ammo: number;
  alive: boolean;
  loggedOff: boolean;
  heard: HeardSpeech[];
  posture: Posture;
  lastIntents: Intent[];
  /** Its last reply's explanation (null before its first reply, or from a transport that does not explain). */
  lastWhy: Why | null;
  /** Partial ammo spent while firing, carried between ticks. */
  fireDebt: number;
}

/** One character as the world stands after a step, for replay pages. */
export interface FrameCharacter {
  id: number;
  brain: boolean;
  kind: string;
  name: string;
  x: number;
  z: number;
  heading: number;
  health: number;
  posture: Posture;
  /** What it is doing, from its last reply (see stateOf). */
  state: string;
  /** Its last reply's intents, in short. */
  label: string;
  /** Its last reply's `why` (brain characters; null for scripted ones and before a first reply). */
  why: Why | null;
  squad: string;
  /** What its last reply aims at or flees from. */
  aim: { kind: 'engage' | 'fire' | 'flee'; target: number } | null;
  /** Where its last reply sends it. */
  dest: { x: number; z: number; investigate: boolean } | null;
}

/** The target a reply engages (firing or not) or flees from, for the replay page's lines. */
export function aimOf(intents: readonly Intent[]): FrameCharacter['aim'] {
  for (const i of intents) {
    if (i.kind === 'Engage') return { kind: i.fire ? 'fire' : 'engage', target: i.target };
    if (i.kind === 'Flee') return { kind: 'flee', target: i.from };
  }
  return null;
}

/** Where a reply sends the character: its Investigate spot, else its first MoveTo. */
export function destOf(intents: readonly Intent[]): FrameCharacter['dest'] {
  let move: FrameCharacter['dest'] = null;
  for (const i of intents) {
    if (i.kind === 'Investigate') return { x: i.at.x, z: i.at.z, investigate: true };
    if (i.kind === 'MoveTo' && move === null) move = { x: i.to.x, z: i.to.z, investigate: false };
  }
  return move;
}

export interface SimOptions {
  /** Called after every step with every character present. */
  onFrame?: (t: number, chars: FrameCharacter[]) => void;
  /** Keep every reply for expectations and the timeline (default true); off for million-tick measurements. */
  keep?: boolean;
  /** Called after every step with the steps done and the steps in all (progress lines). */
  onStep?: (done: number, steps: number) => void;
}

/** A character's state by its last reply, for colouring: the first intent that says what it does. */
export function stateOf(intents: readonly Intent[], brain: boolean): string {
  if (!brain) return 'scripted';
  for (const i of intents) {
    switch (i.kind) {
      case 'Engage':
        return i.fire ? 'firing' : 'engaging';
      case 'Flee':
        return 'fleeing';
      case 'Investigate':
        return 'investigating';
      case 'Logoff':
        return 'logged_off';
      case 'Idle':
        return i.reason === 'afk' || i.reason === 'break' || i.reason === 'dead' ? i.reason : 'idle';
      case 'MoveTo':
        return 'moving';
      default:
        break;
    }
  }
  return 'idle';
}

export interface TimelineEntry {
  t: number;
  agent: number;
  posture: Posture;
  intents: string;
}

export interface RecordLine {
  t: number;
  request: string;
  status: number;
  reply: string;
}

export interface ExpectationResult {
  expectation: Expectation;
  pass: boolean;
  detail: string;
}

export interface SimResult {
  scenario: string;
  ticks: number;
  timeline: TimelineEntry[];
  results: ExpectationResult[];
  pass: boolean;
  final: { id: number; pos: Vec3; health: number; alive: boolean; loggedOff: boolean }[];
}

interface Observation {
  t: number;
  agent: number;
  posture: Posture;
  intents: Intent[];
}

export function describe(intents: readonly Intent[]): string {
  return intents
    .map((i) => {
      switch (i.kind) {
        case 'MoveTo':
          return `MoveTo(${i.to.x.toFixed(0)},${i.to.z.toFixed(0)} ${i.speed})`;
        case 'Engage':
          return `Engage(${i.target}${i.fire ? ' fire' : ''})`;
        case 'Flee':
          return `Flee(${i.from})`;
        case 'Investigate':
          return `Investigate(${i.at.x.toFixed(0)},${i.at.z.toFixed(0)})`;
        case 'Idle':
          return `Idle(${i.reason})`;
        case 'Say':
          return `Say("${i.text}")`;
        case 'Emote':
          return `Emote(${i.name})`;
        case 'Face':
          return `Face(${Math.round(i.yaw_deg)})`;
        default:
          return i.kind;
      }
    })
    .join(' ');
}

/**
 * A small deterministic world that plays the game mod's part: it builds each brain
 * character's perception, sends it as a /tick, and moves, fights and feeds characters by the
 * intents that come back. Time advances in fixed steps, so a run is reproducible.
 */
export class Simulation {
  private readonly chars = new Map<number, Character>();
  private readonly script: ScriptEvent[];
  private readonly observations: Observation[] = [];
  private readonly timeline: TimelineEntry[] = [];
  private readonly lastSummary = new Map<number, string>();
  private readonly logoffAt = new Map<number, number>();
  private readonly waypointSwitches = new Map<number, number>();
  private readonly lastMoveTarget = new Map<number, string>();
  private t = 0;
  private ticks = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly transport: TickTransport,
    private readonly record?: (line: RecordLine) => void,
    private readonly options: SimOptions = {},
  ) {
    for (const spec of scenario.characters) this.add(spec);
    this.script = [...(scenario.script ?? [])].sort((a, b) => a.at_s - b.at_s);
  }

  private add(spec: CharacterSpec): void {
    this.chars.set(spec.id, {
      spec,
      // A character placed inside a wall could never move or be seen: it starts just outside.
      pos: outsideWalls({ ...spec.pos }, this.scenario.world?.obstacles ?? []),
      heading: spec.heading_deg ?? 0,
      health: spec.health ?? 100,
      blood: spec.blood ?? 5000,
      hunger: spec.hunger ?? 20,
      thirst: spec.thirst ?? 20,
      hasWeapon: spec.has_weapon ?? true,
      ammo: spec.ammo ?? 30,
      alive: true,
      loggedOff: false,
      heard: [],
      posture: 'standing',
      lastIntents: [],
      lastWhy: null,
      fireDebt: 0,
    });
  }

  private team(c: Character): string {
    return c.spec.team ?? (c.spec.kind === 'player' ? 'players' : c.spec.kind === 'zombie' ? 'zombies' : 'ai');
  }

  private present(c: Character): boolean {
    return c.alive && !c.loggedOff;
  }

  private applyScript(until: number): void {
    while (this.script.length > 0 && this.script[0]!.at_s <= until) {
      const ev = this.script.shift()!;
      switch (ev.do) {
        case 'damage': {
          const c = this.chars.get(ev.target);
          if (c) {
            c.health = Math.max(0, c.health - ev.amount);
            c.blood = Math.max(0, c.blood - ev.amount * 20);
            if (c.health === 0) c.alive = false;
          }
          break;
        }
        case 'teleport': {
          const c = this.chars.get(ev.id);
          if (c) c.pos = { ...ev.pos };
          break;
        }
        case 'say':
          for (const c of this.chars.values()) {
            if (c.spec.id !== ev.from && c.spec.brain) c.heard.push({ from: ev.from, text: ev.text, at_s: ev.at_s });
          }
          break;
        case 'remove': {
          const c = this.chars.get(ev.id);
          if (c) c.alive = false;
          break;
        }
        case 'spawn':
          this.add(ev.character);
          break;
        case 'set': {
          const c = this.chars.get(ev.id);
          if (c) {
            if (ev.field === 'ammo') c.ammo = ev.value;
            else c[ev.field] = ev.value;
          }
          break;
        }
        case 'set_weapon': {
          const c = this.chars.get(ev.id);
          if (c) c.hasWeapon = ev.has_weapon;
          break;
        }
      }
    }
  }

  /** Drinking at water and eating at food: needs fall while the character is at the place. */
  private consume(c: Character, dt: number): void {
    for (const poi of this.scenario.world?.poi ?? []) {
      if (flatDistance(c.pos, poi.pos) > CONSUME_RADIUS_M) continue;
      if (poi.kind === 'water') c.thirst = Math.max(0, c.thirst - DRINK_PER_S * dt);
      else if (poi.kind === 'food') c.hunger = Math.max(0, c.hunger - EAT_PER_S * dt);
    }
  }

  private moveScripted(c: Character, dt: number): void {
    const path = c.spec.path;
    if (!path || path.length === 0) return;
    const next = path.find((p) => p.at_s > this.t);
    if (!next) {
      c.pos = { ...path[path.length - 1]!.pos };
      return;
    }
    const remaining = Math.max(next.at_s - this.t, dt);
    const dist = flatDistance(c.pos, next.pos);
    c.pos = stepToward(c.pos, next.pos, (dist * dt) / remaining, []);
  }

  private request(c: Character): TickRequest {
    const obstacles = this.scenario.world?.obstacles ?? [];
    const range = this.scenario.world?.perception_m ?? DEFAULT_PERCEPTION_M;
    const targets = [];
    for (const o of this.chars.values()) {
      if (o === c || !this.present(o)) continue;
      if (flatDistance(c.pos, o.pos) > range) continue;
      targets.push({
        id: o.spec.id,
        kind: o.spec.kind ?? (o.spec.brain ? 'ai' : 'player'),
        pos: { x: round(o.pos.x), y: round(o.pos.y), z: round(o.pos.z) },
        hostile: this.team(o) !== this.team(c),
        visible: lineOfSight(c.pos, o.pos, obstacles),
        ...(o.spec.name ? { name: o.spec.name } : {}),
        health: Math.round(o.health),
      });
    }
    const snapshot: TickRequest['snapshot'] = {
      agent: c.spec.id as TickRequest['snapshot']['agent'],
      time_s: round(this.t),
      self_state: {
        pos: { x: round(c.pos.x), y: round(c.pos.y), z: round(c.pos.z) },
        heading_deg: round(c.heading),
        health: Math.round(c.health),
        blood: Math.round(c.blood),
        hunger: Math.round(c.hunger),
        thirst: Math.round(c.thirst),
        has_weapon: c.hasWeapon,
        ammo: c.ammo,
      },
      targets: targets as TickRequest['snapshot']['targets'],
    };
    if (c.spec.route) snapshot.route = c.spec.route;
    if (this.scenario.world?.poi) snapshot.poi = this.scenario.world.poi;
    if (c.heard.length) snapshot.heard = c.heard.splice(0);
    if (c.spec.squad) snapshot.squad = c.spec.squad;
    return { snapshot, profile: c.spec.profile ?? {} };
  }

  private apply(c: Character, reply: TickResponse, dt: number): void {
    c.posture = reply.posture;
    c.lastIntents = reply.intents;
    c.lastWhy = reply.why ?? null;
    let moved = false;
    for (const intent of reply.intents) {
      switch (intent.kind) {
        case 'MoveTo': {
          if (moved) break;
          moved = true;
          const key = `${intent.to.x.toFixed(1)},${intent.to.z.toFixed(1)}`;
          const prev = this.lastMoveTarget.get(c.spec.id);
          if (prev !== undefined && prev !== key && c.spec.route?.some((w) => `${w.x.toFixed(1)},${w.z.toFixed(1)}` === key)) {
            this.waypointSwitches.set(c.spec.id, (this.waypointSwitches.get(c.spec.id) ?? 0) + 1);
          }
          this.lastMoveTarget.set(c.spec.id, key);
          const postureFactor = c.posture === 'crouched' ? 0.6 : c.posture === 'prone' ? 0.25 : 1;
          const step = SPEED_MPS[intent.speed] * postureFactor * dt;
          c.heading = yawTo(c.pos, intent.to);
          c.pos = stepToward(c.pos, intent.to, step, this.scenario.world?.obstacles ?? []);
          break;
        }
        case 'Face':
          c.heading = intent.yaw_deg;
          break;
        case 'Engage': {
          const target = this.chars.get(intent.target);
          if (!intent.fire || !target || !this.present(target) || !c.hasWeapon || c.ammo <= 0) break;
          if (flatDistance(c.pos, target.pos) > FIRE_RANGE_M) break;
          if (!lineOfSight(c.pos, target.pos, this.scenario.world?.obstacles ?? [])) break;
          target.health = Math.max(0, target.health - FIRE_DAMAGE_PER_S * dt);
          if (target.health === 0) target.alive = false;
          c.fireDebt += dt;
          while (c.fireDebt >= 1 && c.ammo > 0) {
            c.fireDebt -= 1;
            c.ammo -= 1;
          }
          break;
        }
        case 'Logoff':
          c.loggedOff = true;
          this.logoffAt.set(c.spec.id, this.t);
          break;
        default:
          break;
      }
    }
  }

  /** Runs the whole scenario and evaluates its expectations. */
  async run(): Promise<SimResult> {
    const dt = 1 / this.scenario.tick_hz;
    const steps = Math.round(this.scenario.duration_s * this.scenario.tick_hz);
    const hungerRate = this.scenario.world?.hunger_per_s ?? 0;
    const thirstRate = this.scenario.world?.thirst_per_s ?? 0;
    for (let step = 0; step <= steps; step++) {
      this.t = round(step * dt);
      this.applyScript(this.t);
      for (const c of this.chars.values()) {
        if (!this.present(c)) continue;
        c.hunger = Math.min(100, c.hunger + hungerRate * dt);
        c.thirst = Math.min(100, c.thirst + thirstRate * dt);
        if (c.spec.brain) this.consume(c, dt);
        if (!c.spec.brain) this.moveScripted(c, dt);
      }
      // Agents tick in id order so that a run is the same every time.
      const agents = [...this.chars.values()].filter((c) => c.spec.brain && this.present(c)).sort((a, b) => a.spec.id - b.spec.id);
      for (const c of agents) {
        const body = JSON.stringify(this.request(c));
        const res = await this.transport(body);
        this.record?.({ t: this.t, request: body, status: res.status, reply: res.body });
        this.ticks++;
        if (res.status !== 200) throw new Error(`tick for agent ${c.spec.id} at ${this.t}s answered ${res.status}: ${res.body.slice(0, 300)}`);
        const reply = JSON.parse(res.body) as TickResponse;
        if (this.options.keep !== false) {
          this.observations.push({ t: this.t, agent: c.spec.id, posture: reply.posture, intents: reply.intents });
          const summary = `${reply.posture} ${describe(reply.intents)}`;
          if (this.lastSummary.get(c.spec.id) !== summary) {
            this.lastSummary.set(c.spec.id, summary);
            this.timeline.push({ t: this.t, agent: c.spec.id, posture: reply.posture, intents: describe(reply.intents) });
          }
        }
        this.apply(c, reply, dt);
      }
      this.options.onFrame?.(this.t, this.frame());
      this.options.onStep?.(step + 1, steps + 1);
    }
    const results = (this.scenario.expect ?? []).map((e) => this.evaluate(e));
    return {
      scenario: this.scenario.name,
      ticks: this.ticks,
      timeline: this.timeline,
      results,
      pass: results.every((r) => r.pass),
      final: [...this.chars.values()].map((c) => ({ id: c.spec.id, pos: c.pos, health: c.health, alive: c.alive, loggedOff: c.loggedOff })),
    };
  }

  private frame(): FrameCharacter[] {
    const out: FrameCharacter[] = [];
    for (const c of this.chars.values()) {
      if (!this.present(c) && !(c.spec.brain && (c.loggedOff || !c.alive))) continue;
      out.push({
        id: c.spec.id,
        brain: c.spec.brain,
        kind: c.spec.kind ?? (c.spec.brain ? 'ai' : 'player'),
        name: c.spec.name ?? c.spec.profile?.name ?? `#${c.spec.id}`,
        x: round(c.pos.x),
        z: round(c.pos.z),
        heading: Math.round(c.heading),
        health: Math.round(c.health),
        posture: c.posture,
        state: !c.alive ? 'dead' : stateOf(c.lastIntents, c.spec.brain),
        label: c.spec.brain ? describe(c.lastIntents) : (c.spec.name ?? c.spec.kind ?? ''),
        squad: c.spec.squad ?? '',
        why: c.alive ? c.lastWhy : null,
        aim: c.alive ? aimOf(c.lastIntents) : null,
        dest: c.alive ? destOf(c.lastIntents) : null,
      });
    }
    return out;
  }

  private inWindow(o: Observation, from?: number, to?: number): boolean {
    return (from === undefined || o.t >= from) && (to === undefined || o.t <= to);
  }

  private evaluate(e: Expectation): ExpectationResult {
    const r = (pass: boolean, detail: string): ExpectationResult => ({ expectation: e, pass, detail });
    switch (e.check) {
      case 'distance_gt':
      case 'distance_lt': {
        const a = this.chars.get(e.a);
        const bPos = typeof e.b === 'number' ? this.chars.get(e.b)?.pos : e.b;
        if (!a || !bPos) return r(false, 'unknown character');
        const d = flatDistance(a.pos, bPos);
        return r(e.check === 'distance_gt' ? d > e.value : d < e.value, `distance ${d.toFixed(1)} m`);
      }
      case 'intent_seen':
      case 'intent_never': {
        const hits = this.observations.filter(
          (o) =>
            (e.agent === undefined || o.agent === e.agent) &&
            this.inWindow(o, e.from_s, e.to_s) &&
            o.intents.some((i) => i.kind === e.kind && (e.reason === undefined || (i.kind === 'Idle' && i.reason === e.reason))),
        );
        const first = hits[0];
        return e.check === 'intent_seen'
          ? r(hits.length > 0, first ? `first at ${first.t}s` : 'never seen')
          : r(hits.length === 0, first ? `seen at ${first.t}s (agent ${first.agent})` : 'never seen');
      }
      case 'intent_count_gt':
      case 'intent_count_lt': {
        const n = this.observations.filter((o) => (e.agent === undefined || o.agent === e.agent) && o.intents.some((i) => i.kind === e.kind)).length;
        return r(e.check === 'intent_count_gt' ? n > e.value : n < e.value, `${n} replies with ${e.kind}`);
      }
      case 'posture_seen': {
        const hit = this.observations.find((o) => o.agent === e.agent && o.posture === e.posture && this.inWindow(o, e.from_s, e.to_s));
        return r(Boolean(hit), hit ? `first at ${hit.t}s` : 'never seen');
      }
      case 'logoff_between': {
        const at = this.logoffAt.get(e.agent);
        return r(at !== undefined && at >= e.from_s && at <= e.to_s, at === undefined ? 'never logged off' : `logged off at ${at}s`);
      }
      case 'waypoint_switches_gt': {
        const n = this.waypointSwitches.get(e.agent) ?? 0;
        return r(n > e.value, `${n} waypoint switches`);
      }
      case 'alive': {
        const c = this.chars.get(e.agent);
        return r(Boolean(c?.alive), c?.alive ? `health ${c.health.toFixed(0)}` : 'dead');
      }
    }
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
