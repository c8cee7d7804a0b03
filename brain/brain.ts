import { AgentStore, DEFAULT_MAX_AGENTS, DEFAULT_STALE_AFTER_S } from './agents.js';
import { policyOn } from './bundle.js';
import { Counters } from './counters.js';
import { EMOTE_GAP_S, mood, pickEmote, updateEmotions } from './emotions.js';
import { drawName, drawThemes } from './flavor.js';
import { vec } from './geometry.js';
import { framingOf, goalSpeed, modeForGoal, needy, plan, pushGoal, urgent, type Framing } from './goals.js';
import { endAway, isAway, maybeGoAway, sessionOver, tiredSpeed, updateFatigue } from './human-factors.js';
import { EV, forget, observe, remember, summarize, type MemorySummary } from './memory.js';
import { applyProfileTraits, cowardly, sampleSessionS, sampleTraits, temper } from './population.js';
import { noise, seedFor } from './prng.js';
import {
  ambientEmote,
  contactMemoryS,
  fireNow,
  flightGoesOn,
  friendNear,
  hear,
  INVESTIGATE_MAX_S,
  MAX_INVESTIGATORS,
  newRhythm,
  NO_RETURN_S,
  pausedAtWaypoint,
  detour,
  pushFlight,
  pushLook,
  pushManoeuvre,
  pushSearch,
  SEEK_BRAVERY,
  shooterFree,
  startFlight,
  windingDown,
} from './conduct.js';
import { combatPosture, inFireRange, pushEngage, pushFlee } from './reactive/combat.js';
import { CONTACT_MEMORY_S, hasRecentContact, pushInvestigate, recordContact } from './reactive/investigate.js';
import { pushPatrol } from './reactive/patrol.js';
import { newPerception, perceive } from './reactive/perception.js';
import { alignmentOf, survivorOf, type Alignment } from './roster.js';
import { Squads, type Centre, type Squad } from './squads.js';
import type { Goal, Mode } from './modes.js';
import { AgentState } from './state.js';
import { toPlain, type PlainAgent } from './state-schema.js';
import { exportAgents, parseState, type BrainState } from './state-io.js';
import type { ConfigBundle, Intent, Posture, Profile, Role, Speed, Survivor, TickRequest, TickResponse, Traits } from './types.js';
import { fleeMargin } from './utility.js';
import { distH } from './geometry.js';
import { FRIENDLY_RANGE_M } from './reactive/perception.js';

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

/** Policy keys read once per bundle so the tick tests booleans, not object lookups. */
interface Switches {
  human: boolean;
  goals: boolean;
  knowledge: boolean;
  squads: boolean;
  memory: boolean;
  emotions: boolean;
  emotes: boolean;
  flavor: boolean;
  allowNames: boolean;
  framing: Framing;
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

/** A flight is kept at least this long even when the odds turn (human_factors on). */
const FLEE_KEEP_S = 8;
/** A squad member's place beside its leader: this far, at its own angle, and close enough within the slack. */
const FOLLOW_MIN_M = 3;
const FOLLOW_MAX_M = 8;
/**
 * A standing member sets off when its place is more than FOLLOW_SLACK_M away and, once walking,
 * goes on until within FOLLOW_ARRIVE_M: without the gap a member beside a walking leader
 * stops and starts every other tick.
 */
const FOLLOW_SLACK_M = 5;
const FOLLOW_ARRIVE_M = 1.5;

/**
 * A leader left behind (most of its squad beyond the leash) keeps its own way this long before
 * it turns back: a squad lagging a few steps catches up on its own.
 */
const LEADER_LEASH_S = 10;
/** A member this far from where it keeps with its squad sprints back rather than jogs (human_factors on). */
const REGROUP_SPRINT_M = 40;
/** strayT when the leader is not left behind. */
const NEVER_T = -1e9;

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

/** Taking damage brings a character back from AFK or a break. Always true, for use in a condition. */
function endAfterHit(a: AgentState): boolean {
  endAway(a);
  return true;
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
  private readonly p = newPerception();

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
    this.agents = new AgentStore(maxAgents, staleAfterS, (a) => this.squads.leave(a));
  }

  get version(): number {
    return this.bundle.version;
  }

  /** Swaps the bundle; agents keep who they are (traits, themes, session), policies apply from the next tick. */
  setBundle(bundle: ConfigBundle): void {
    this.bundle = bundle;
    this.sw = switchesOf(bundle);
  }

  get agentCount(): number {
    return this.agents.size;
  }

  tick(request: TickRequest): TickResponse {
    const s = request.snapshot;
    const prof = request.profile ?? NO_PROFILE;
    const sw = this.sw;
    const time = s.time_s;
    const st = s.self_state;
    const pos = st.pos;
    const id = s.agent as number;

    let a = this.agents.current(id, time);
    const first = a === undefined;
    if (a === undefined) a = this.spawn(id, time, prof, pos.x, pos.y, pos.z);
    const dt = first || time < a.lastT ? 0 : time - a.lastT;
    if (prof.role !== undefined && prof.role !== a.role) a.role = ownRole(prof.role);
    if (prof.name !== undefined && prof.name !== a.name) a.name = prof.name;
    if (applyProfileTraits(a.traits, prof)) temper(a);

    const p = this.p;
    perceive(s, a.health, first, p);
    const threat = p.threat;
    if (threat !== null) {
      if (!a.sawHostile) {
        this.counters.bump('snap');
        remember(a, EV.spotted, time, threat.id);
      }
      recordContact(a, threat, time);
    }
    a.sawHostile = threat !== null;

    if (sw.memory) {
      const heard = observe(a, s, threat, sw.allowNames);
      if (heard > 0) this.counters.bump('heard', heard);
      if (p.damage > 0) remember(a, EV.damaged, time, p.damage);
    } else if (a.mem !== null) forget(a);

    let sq: Squad | null = null;
    let lostMate = false;
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
        else if (this.squads.adoptContact(sq, a, time, CONTACT_MEMORY_S)) {
          this.counters.bump('squad');
          remember(a, EV.squad_contact, time, a.contactId);
        }
      }
    } else if (!sw.squads && a.squad !== '') {
      this.squads.leave(a);
      a.squad = '';
    }

    if (sw.emotions) updateEmotions(a, p, dt, lostMate, sw.human ? a.fatigue : 0);

    const out: Intent[] = [];
    let posture: Posture = 'standing';
    let speed: Speed | null = null;
    let away = false;
    let mode: Mode;
    let lead: Speed | 'stand' | null;
    let ld: AgentState | null;
    const wasMode = a.mode;

    if (st.health <= 0) {
      // Mourned once, on dying; the dead do not rejoin (see the squads block above).
      if (a.squad !== '') this.squads.mourn(a);
      out.push({ kind: 'Idle', reason: 'dead' });
      posture = 'prone';
      mode = 'dead';
    } else if (sw.human && (a.loggedOff || (threat === null && sessionOver(a, time)))) {
      if (!a.loggedOff) {
        a.loggedOff = true;
        this.counters.bump('logoff');
        remember(a, EV.logoff, time, 0);
        this.squads.leave(a);
        a.squad = '';
      }
      out.push({ kind: 'Logoff' });
      mode = 'logged_off';
    } else if (sw.human && isAway(a, time) && !(p.damage > 0 && endAfterHit(a))) {
      out.push({ kind: 'Idle', reason: a.afkReason });
      away = true;
      mode = a.afkReason === 'break' ? 'on_break' : 'afk';
    } else if (threat !== null) {
      const coward = prof.coward === true || cowardly(a);
      let flee = !p.armed || coward || fleeMargin(a, p, st.health, sw.emotions, sw.human) > 0;
      // A squad does not all run at once: someone who could fight holds while half are running.
      if (flee && p.armed && prof.coward !== true && sq !== null && sq.members.size > 1) {
        if (this.squads.fleeingOthers(sq, a, time) >= Math.max(1, Math.floor(sq.members.size / 2))) {
          flee = false;
          if (wasMode !== 'engaging') this.counters.bump('block');
        }
      }
      // A flight is kept long enough to look meant.
      if (!flee && sw.human && wasMode === 'fleeing' && time - a.fleeT < FLEE_KEEP_S) flee = true;
      if (flee) {
        if (sw.human) {
          if (wasMode !== 'fleeing') startFlight(a, time, threat.id);
          a.fledT = time;
          pushFlight(out, a, s, threat.id, dt, sq, time);
        } else pushFlee(out, st, threat);
        speed = 'sprint';
        mode = 'fleeing';
        if (wasMode !== 'fleeing') remember(a, EV.fled, time, threat.id);
      } else {
        let fire = inFireRange(p.threatDist);
        if (sw.human) {
          // fireNow also starts the engagement clock, so it runs whatever the range.
          fire = fireNow(a, threat, p.threatDist, time, first, st.ammo) && fire;
          if (fire && sq !== null && !shooterFree(sq.members, a, threat.id, time)) fire = false;
          if (fire) {
            a.fireT = time;
            a.fireTarget = threat.id;
          }
        }
        pushEngage(out, st, threat, fire);
        posture = combatPosture(p.threatDist);
        mode = 'engaging';
        if (sw.human) {
          if (pushManoeuvre(out, a, s, threat, p.threatDist, time)) speed = 'jog';
          if (wasMode !== 'engaging' && !first && sq !== null && sw.emotes && time - a.lastEmoteT >= EMOTE_GAP_S && a.social >= 0.4) {
            out.push({ kind: 'Emote', name: 'point' });
            a.lastEmoteT = time;
            this.counters.bump('emote');
          }
        }
        if (threat.kind === 'player') a.engagedPlayerT = time;
        if (wasMode !== 'engaging') remember(a, EV.engaged, time, threat.id);
      }
    } else if (sw.human && flightGoesOn(a, pos.x, pos.z, time)) {
      a.fledT = time;
      pushFlight(out, a, s, a.fledId, dt, sq, time);
      speed = 'sprint';
      mode = 'fleeing';
    } else if (
      (sw.human ? a.contact && (wasMode === 'investigating' || time - a.contactT <= CONTACT_MEMORY_S) : hasRecentContact(a, pos, time)) &&
      (p.wounded || ((a.contactShared || (sw.human && a.brave >= SEEK_BRAVERY)) && prof.coward !== true && !cowardly(a))) &&
      !(sw.human && this.investigationBarred(a, sq, pos.x, pos.z, time, wasMode))
    ) {
      if (sw.human) {
        const how = pushSearch(out, a, pos.x, pos.z, time, p.wounded);
        if (how === null) {
          out.push({ kind: 'Idle', reason: 'looking_around' });
          mode = 'idle';
        } else {
          posture = how === 'jog' ? 'standing' : 'crouched';
          speed = how === 'search' ? null : how;
          mode = 'investigating';
        }
      } else {
        pushInvestigate(out, a);
        posture = 'crouched';
        speed = 'walk';
        mode = 'investigating';
      }
    } else if (sw.human && threat === null && windingDown(a, time)) {
      out.push({ kind: 'Idle', reason: 'winding_down' });
      posture = 'crouched';
      mode = 'idle';
    } else if (sw.human && maybeGoAway(a, time, dt)) {
      this.counters.bump('afk');
      remember(a, a.afkReason === 'break' ? EV.break : EV.afk, time, 0);
      out.push({ kind: 'Idle', reason: a.afkReason });
      away = true;
      mode = a.afkReason === 'break' ? 'on_break' : 'afk';
    } else if (
      sw.goals &&
      sq !== null &&
      (ld = this.squads.leaderOf(sq, a, time)) !== null &&
      ld !== a &&
      !needy(a, s) &&
      this.squads.centroid(sq, a, time).n > 0
    ) {
      // The squad moves together: the leader keeps its route and goals, the others keep with the
      // leader (regrouping when strayed, else at their own place beside it).
      speed = this.regroup(a, sq, out, time, pos.x, pos.z);
      if (speed !== null) mode = 'regrouping';
      else {
        speed = this.follow(a, this.squads.centre, out, pos.x, pos.z);
        mode = speed === null ? 'idle' : 'traveling';
      }
    } else if (
      sw.goals &&
      sq !== null &&
      this.squads.leaderOf(sq, a, time) === a &&
      !needy(a, s) &&
      (lead = this.leaderRegroup(a, sq, out, time, pos.x, pos.z)) !== null
    ) {
      speed = lead === 'stand' ? null : lead;
      mode = 'regrouping';
    } else if (s.route !== undefined && s.route.length >= 2 && !(sw.goals && needy(a, s))) {
      mode = 'patrolling';
      if (sw.human && pausedAtWaypoint(a, pos, s.route, time)) out.push({ kind: 'Idle', reason: 'looking_around' });
      else {
        speed = 'walk';
        const route = s.route;
        const wp = route[a.waypoint >= 0 && a.waypoint < route.length ? a.waypoint : 0]!;
        const how = sw.human ? detour(out, a, pos, wp.x, wp.z, speed, time, wasMode === 'patrolling') : null;
        if (how === 'give_up') a.waypoint = (a.waypoint + 1) % route.length;
        if (how !== 'detour') pushPatrol(out, a, pos, route);
      }
    } else if (sq !== null && !(sw.goals && needy(a, s)) && (speed = this.regroup(a, sq, out, time, pos.x, pos.z)) !== null) {
      mode = 'regrouping';
    } else if (sw.goals) {
      if (a.goal === 'regroup') a.goalT = -1e9;
      if (plan(a, s, time, sw.framing, sw.knowledge, sw.human ? a.fatigue : 0)) {
        this.counters.bump('plan');
        remember(a, EV.plan, time, 0);
      }
      const want = goalSpeed(a, urgent(a, s));
      const pace = sw.human ? tiredSpeed(a, want) : want;
      const how = sw.human && a.goalHas ? detour(out, a, pos, a.goalX, a.goalZ, pace, time, wasMode === modeForGoal(a.goal)) : null;
      if (how === 'give_up') {
        // Unreachable from here: drop it and choose again next tick.
        a.goalHas = false;
        a.goalT = -1e9;
      }
      speed = how === 'detour' ? pace : pushGoal(out, a, pos, pace);
      mode = speed === null ? (a.goal === 'guard' ? 'guarding' : 'idle') : modeForGoal(a.goal);
    } else {
      out.push({ kind: 'Idle', reason: 'none' });
      mode = 'idle';
    }

    const calmMode = mode !== 'dead' && mode !== 'logged_off' && !away && mode !== 'engaging' && mode !== 'fleeing';
    let heardNow = false;
    if (sw.human && calmMode) {
      heardNow = hear(a, s, time);
      pushLook(out, a, st.heading_deg, time);
    }
    if (sw.emotes && sw.human) {
      if (calmMode) {
        const emote = ambientEmote(a, time, p.friendly !== null || friendNear(s, FRIENDLY_RANGE_M), heardNow);
        if (emote !== null) {
          out.push({ kind: 'Emote', name: emote });
          this.counters.bump('emote');
        }
      } else if (mode === 'engaging' || mode === 'fleeing') {
        const emote = pickEmote(a, p, time, mode === 'fleeing', mode === 'engaging', sw.emotions, a.social);
        if (emote !== null) {
          out.push({ kind: 'Emote', name: emote });
          this.counters.bump('emote');
        }
      }
    } else if (sw.emotes && mode !== 'dead' && mode !== 'logged_off' && !away) {
      const emote = pickEmote(a, p, time, mode === 'fleeing', mode === 'engaging', sw.emotions, a.social);
      if (emote !== null) {
        out.push({ kind: 'Emote', name: emote });
        this.counters.bump('emote');
      }
    }
    if (sw.human) updateFatigue(a, speed, away, dt);

    a.mode = mode;
    // Still in a squad at this point means in the one joined above (dying or logging off left it).
    const mine = a.squad === '' ? undefined : (sq ?? this.squads.of(a));
    if (mine !== undefined) {
      if (mode !== wasMode) this.squads.modeChanged(mine, a);
      this.squads.moved(mine, a, pos.x, pos.y, pos.z);
    }
    a.lastT = time;
    a.ticks++;
    a.health = st.health;
    a.blood = st.blood;
    a.x = pos.x;
    a.y = pos.y;
    a.z = pos.z;
    return { agent: id, posture, intents: out };
  }

  /**
   * Whether this contact is not to be investigated now: within NO_RETURN_S of a flight, one
   * remembered too briefly for how far it was, or one MAX_INVESTIGATORS squadmates already search.
   */
  private investigationBarred(a: AgentState, sq: Squad | null, x: number, z: number, time: number, wasMode: Mode): boolean {
    if (time - a.fledT < NO_RETURN_S) return true;
    if (wasMode === 'investigating') return time - a.invT > INVESTIGATE_MAX_S;
    if (time - a.contactT >= contactMemoryS(CONTACT_MEMORY_S, distH(x, z, a.contactX, a.contactZ))) return true;
    if (sq === null || !a.contactShared) return false;
    let n = 0;
    for (const m of sq.members.values()) if (m !== a && m.mode === 'investigating' && m.contactId === a.contactId && ++n >= MAX_INVESTIGATORS) return true;
    return false;
  }

  /** Keeps the member's own place beside where it keeps with the squad (its leader; the regroup point too): jog when far, walk when near, stand when there. */
  private follow(a: AgentState, leader: Centre, out: Intent[], x: number, z: number): Speed | null {
    const angle = 2 * Math.PI * noise(a.id, 6);
    const r = FOLLOW_MIN_M + (FOLLOW_MAX_M - FOLLOW_MIN_M) * noise(a.id, 7);
    const tx = leader.x + Math.sin(angle) * r;
    const tz = leader.z + Math.cos(angle) * r;
    const d = distH(x, z, tx, tz);
    if (d <= (a.mode === 'traveling' ? FOLLOW_ARRIVE_M : FOLLOW_SLACK_M)) {
      out.push({ kind: 'Idle', reason: 'with_squad' });
      return null;
    }
    const want: Speed = d > 20 ? 'jog' : 'walk';
    const speed = this.sw.human ? tiredSpeed(a, want) : want;
    out.push({ kind: 'MoveTo', to: vec(tx, leader.y, tz), speed });
    return speed;
  }

  /**
   * The leader keeps its own route and goals while the squad keeps up. Left behind for
   * LEADER_LEASH_S, it turns back to the others (a leader that turned back at once would U-turn
   * whenever its squad lagged a few steps), and once with them it stands by while most of them
   * fight, flee or search, rather than walk off and have to turn back again. Returns the speed
   * it moves at, 'stand', or null to go on its own way.
   */
  private leaderRegroup(a: AgentState, sq: Squad, out: Intent[], time: number, x: number, z: number): Speed | 'stand' | null {
    const back = a.strayT !== NEVER_T && time - a.strayT >= LEADER_LEASH_S;
    if (!this.squads.leftBehind(sq, a, x, z, time, back)) {
      if (back && this.squads.mostlyBusy(sq, a, time)) {
        out.push({ kind: 'Idle', reason: 'with_squad' });
        return 'stand';
      }
      a.strayT = NEVER_T;
      return null;
    }
    if (a.strayT === NEVER_T) a.strayT = time;
    if (time - a.strayT < LEADER_LEASH_S) return null;
    return this.headBack(a, this.squads.centroid(sq, a, time), out, time, x, z);
  }

  /** Heads back toward a squad that has drifted away; counts as a `regroup` goal when goals are on. */
  private regroup(a: AgentState, sq: Squad, out: Intent[], time: number, x: number, z: number): Speed | null {
    const c = this.squads.centroid(sq, a, time);
    if (!this.squads.strayed(x, z, a.social, a.mode === 'regrouping')) return null;
    return this.headBack(a, c, out, time, x, z);
  }

  /** Jogs to `c` (sprints beyond REGROUP_SPRINT_M, with human_factors): the `regroup` goal. */
  private headBack(a: AgentState, c: Centre, out: Intent[], time: number, x: number, z: number): Speed {
    if (this.sw.goals && a.goal !== 'regroup') {
      a.goal = 'regroup';
      a.goalT = time;
      this.counters.bump('plan');
      remember(a, EV.plan, time, 0);
    }
    const want: Speed = distH(x, z, c.x, c.z) > REGROUP_SPRINT_M ? 'sprint' : 'jog';
    const speed = this.sw.human ? tiredSpeed(a, want) : 'jog';
    out.push({ kind: 'MoveTo', to: vec(c.x, c.y, c.z), speed });
    return speed;
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
