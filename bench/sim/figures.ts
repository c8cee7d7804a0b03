import type { Intent, Snapshot, TickResponse, Vec3 } from '../../brain/types.js';

/**
 * The believability figures, counted from a simulator run's ticks as they happen (a 3-hour run
 * is a million ticks: nothing per tick is kept beyond a few numbers per character). Every
 * figure is defined here in one place; `bench believability` and its test only read them.
 */

/** A character is "outside combat" this long after it last saw a hostile or engaged, fled or investigated. */
export const COMBAT_TAIL_S = 10;
/** A new MoveTo destination this far from the previous one is a change of goal... */
export const GOAL_JUMP_M = 10;
/** ...unless the character was already within this of the previous one (it arrived). */
export const ARRIVED_M = 5;
/** A change of goal that turns the character back by more than this is a U-turn. */
export const U_TURN_DEG = 135;
/** An investigation that comes this near its spot reached it. */
export const REACHED_M = 5;
/** An Investigate within this long of the end of a flight, near what was fled from, goes back to it. */
export const FLED_CONTACT_S = 60;
export const FLED_CONTACT_M = 20;
/** A reply repeated unchanged for longer than this is a statue. */
export const STATUE_S = 60;
/** A heard line is answered when a Face within this many degrees of the speaker follows within TURN_WITHIN_S. */
export const TURN_TOLERANCE_DEG = 30;
export const TURN_WITHIN_S = 2;
/** A logoff counts as wound down when the character made no MoveTo for this long before it. */
export const WIND_DOWN_S = 10;
/** This many characters switching the same way on one tick is a crowd switching as one. */
export const ALIKE_MIN = 5;
/** Engagements shorter than this are too short to judge fire pauses. */
export const MIN_ENGAGEMENT_S = 5;
/** A silence in an engagement longer than this is a cease-fire, not a pause between bursts. */
export const CEASE_FIRE_S = 5;
/** Flight lengths are binned this wide to find the most common one... */
export const FLIGHT_BIN_S = 0.5;
/** ...in a run with at least this many flights (one flight is always 100% of them). */
export const MIN_FLIGHTS = 5;
/** A squadmate's reaction to a member's first sighting is looked for this long. */
export const REACTION_WINDOW_S = 10;
/** A squad's sighting is a first one when no member saw a hostile for this long. */
export const SQUAD_QUIET_S = 10;
/** First sights at least this far count for the far first-shot figure. */
export const FAR_SIGHT_M = 100;
/** A flight bearing closer than this to a fled threat's direction runs toward it. */
export const TOWARD_DEG = 90;

export interface Figures {
  ticks: number;
  character_hours: number;
  goal_changes_per_min: number;
  u_turns_per_hour: number;
  median_flight_s: number | null;
  flee_to_investigate_same_contact: number;
  engage_ticks_moving_share: number | null;
  fire_pauses_per_10s: number | null;
  max_shooters_per_target_per_squad: number;
  alike_change_share: number | null;
  investigations: number;
  investigations_reached_share: number | null;
  statue_stretches: number;
  emotes_per_hour: number;
  heard_lines: number;
  heard_turn_share: number | null;
  logoffs: number;
  logoffs_wound_down_share: number | null;
  median_squad_distance_m: number | null;
  // Believable behaviour II.
  flights: number;
  flight_modal_share: number | null;
  squad_reactions: number;
  median_squad_reaction_s: number | null;
  far_first_shots: number;
  median_far_first_shot_s: number | null;
  investigations_started: number;
  investigations_started_reached_share: number | null;
  emotes: number;
  /** Emotes by name. */
  emote_names: Record<string, number>;
  emote_modal_share: number | null;
  follow_flips_per_hour: number;
  flight_bearings_toward_threat: number;
}

interface Char {
  lastT: number;
  /** Last time it saw a hostile or engaged, fled or investigated. */
  combatT: number;
  destSet: boolean;
  destX: number;
  destZ: number;
  cls: string;
  fleeing: boolean;
  fleeStart: number;
  /** Hostiles fled from in the current or last flight: id → last seen position. */
  fledFrom: Map<number, Vec3>;
  fleeEnd: number;
  investigating: boolean;
  invAt: Vec3;
  invReached: boolean;
  engaging: boolean;
  engStart: number;
  engFired: boolean;
  engLastFire: number;
  engPauses: number;
  lastFire: boolean;
  engageTicks: number;
  engageMoving: number;
  reply: string;
  replySince: number;
  replyCounts: boolean;
  moveT: number;
  firstT: number;
  loggedOff: boolean;
  x: number;
  z: number;
  squad: string;
  /** Heard lines awaiting a turn: speaker position and deadline. */
  pending: { x: number; z: number; until: number }[];
  /** Whether it saw a hostile last tick; when the current sighting began, how far, whether it has fired since. */
  saw: boolean;
  sightT: number;
  sightFar: boolean;
  sightShot: boolean;
  /** A squad sighting it is to react to: its time and the behaviour class it had then (null: none). */
  reactT: number;
  reactFrom: string | null;
  /** Where the caller stood: a turn toward it is a reaction too. */
  reactX: number;
  reactZ: number;
  /** Following the squad: 1 walking to its place, 2 standing with the squad, 0 neither. */
  follow: number;
  /** Whether the current investigation counts as started (not one begun while a hostile is in sight). */
  invStarted: boolean;
  /** The behaviour class of its previous tick, and whether this tick's reply is away. */
  prevCls: string;
  away: boolean;
  /** Where the hostile fled from was last seen. */
  fledSeen: boolean;
  fledSeenX: number;
  fledSeenZ: number;
}

function yawTo(ax: number, az: number, bx: number, bz: number): number {
  const d = (Math.atan2(bx - ax, bz - az) * 180) / Math.PI;
  return (d + 360) % 360;
}

function angleBetween(a: number, b: number): number {
  const d = Math.abs(a - b) % 360;
  return d > 180 ? 360 - d : d;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The part of a reply that says what the character is doing (not where it looks or what it says). */
function behaviourClass(r: TickResponse): string {
  let out = r.posture;
  for (const i of r.intents) {
    switch (i.kind) {
      case 'Face':
      case 'Emote':
      case 'Say':
        break;
      case 'MoveTo':
        out += ` MoveTo:${i.speed}`;
        break;
      case 'Engage':
        out += ` Engage:${i.fire}`;
        break;
      case 'Idle':
        out += ` Idle:${i.reason}`;
        break;
      default:
        out += ` ${i.kind}`;
    }
  }
  return out;
}

function isAway(r: TickResponse): boolean {
  for (const i of r.intents) {
    if (i.kind === 'Logoff') return true;
    if (i.kind === 'Idle' && (i.reason === 'afk' || i.reason === 'break' || i.reason === 'dead')) return true;
  }
  return false;
}

/** A fixed-width histogram for a median over millions of samples. */
class Histogram {
  private readonly bins: Float64Array;
  private n = 0;
  constructor(
    private readonly width: number,
    count: number,
  ) {
    this.bins = new Float64Array(count);
  }
  add(v: number): void {
    const i = Math.min(this.bins.length - 1, Math.max(0, Math.floor(v / this.width)));
    this.bins[i]!++;
    this.n++;
  }
  median(): number | null {
    if (this.n === 0) return null;
    let acc = 0;
    for (let i = 0; i < this.bins.length; i++) {
      acc += this.bins[i]!;
      if (acc >= this.n / 2) return (i + 0.5) * this.width;
    }
    return null;
  }
}

export class FigureCounter {
  private readonly chars = new Map<number, Char>();
  private step = -1;
  private dt = 0.5;
  private ticks = 0;
  private charSeconds = 0;
  private quietSeconds = 0;
  private goalChanges = 0;
  private uTurns = 0;
  private readonly flights: number[] = [];
  private backToFled = 0;
  private pauses = 0;
  private engagedSeconds = 0;
  private maxShooters = 0;
  private changes = 0;
  private alike = 0;
  private investigations = 0;
  private reached = 0;
  private statues = 0;
  private emotes = 0;
  private heardLines = 0;
  private heardTurned = 0;
  private logoffs = 0;
  private woundDown = 0;
  private readonly squadDist = new Histogram(0.5, 4000);
  private readonly flightBins = new Map<number, number>();
  private wholeFlights = 0;
  private readonly reactions: number[] = [];
  private readonly farShots: number[] = [];
  private started = 0;
  private startedReached = 0;
  private readonly emoteNames = new Map<string, number>();
  private followFlips = 0;
  private towardThreat = 0;
  /** Per squad: when a member last saw a hostile. */
  private readonly squadSawT = new Map<string, number>();
  /** Squad sightings of this step, to be reacted to by the other members from the next tick. */
  private readonly sightings: { squad: string; t: number; by: number; x: number; z: number }[] = [];
  /** This step's behaviour switches by "from → to", and shooters by squad and target. */
  private readonly switches = new Map<string, number>();
  private readonly shooters = new Map<string, number>();
  /** This step's members outside combat, by squad. */
  private readonly members = new Map<string, Char[]>();

  constructor(tickHz: number) {
    this.dt = 1 / tickHz;
  }

  private char(id: number, t: number): Char {
    let c = this.chars.get(id);
    if (c === undefined) {
      c = {
        lastT: t,
        combatT: -1e9,
        destSet: false,
        destX: 0,
        destZ: 0,
        cls: '',
        fleeing: false,
        fleeStart: 0,
        fledFrom: new Map(),
        fleeEnd: -1e9,
        investigating: false,
        invAt: { x: 0, y: 0, z: 0 },
        invReached: false,
        engaging: false,
        engStart: 0,
        engFired: false,
        engLastFire: 0,
        engPauses: 0,
        lastFire: false,
        engageTicks: 0,
        engageMoving: 0,
        reply: '',
        replySince: t,
        replyCounts: false,
        moveT: t,
        firstT: t,
        loggedOff: false,
        x: 0,
        z: 0,
        squad: '',
        pending: [],
        saw: false,
        sightT: 0,
        sightFar: false,
        sightShot: false,
        reactT: 0,
        reactFrom: null,
        reactX: 0,
        reactZ: 0,
        follow: 0,
        invStarted: false,
        prevCls: '',
        away: false,
        fledSeen: false,
        fledSeenX: 0,
        fledSeenZ: 0,
      };
      this.chars.set(id, c);
    }
    return c;
  }

  /** One tick: the request's snapshot and the reply (its text, to compare replies whole). */
  add(t: number, s: Snapshot, reply: TickResponse, replyText: string): void {
    if (t !== this.step) this.endStep(t);
    this.ticks++;
    const c = this.char(s.agent as number, t);
    const dt = this.dt;
    const pos = s.self_state.pos;
    c.x = pos.x;
    c.z = pos.z;
    c.squad = s.squad ?? '';
    let seesHostile = false;
    for (const tg of s.targets) if (tg.hostile && tg.visible) seesHostile = true;
    const get = <K extends Intent['kind']>(k: K): Extract<Intent, { kind: K }> | undefined =>
      reply.intents.find((i) => i.kind === k) as Extract<Intent, { kind: K }> | undefined;
    const move = get('MoveTo');
    const engage = get('Engage');
    const flee = get('Flee');
    const inv = get('Investigate');
    const face = get('Face');
    const away = isAway(reply);
    const logoff = get('Logoff') !== undefined;
    if (!away) this.charSeconds += dt;
    if (seesHostile || engage || flee || inv) c.combatT = t;
    const outside = t - c.combatT > COMBAT_TAIL_S && !away;

    // Goals and U-turns, outside combat only.
    if (outside) {
      this.quietSeconds += dt;
      if (move !== undefined) {
        if (c.destSet) {
          const jump = Math.hypot(move.to.x - c.destX, move.to.z - c.destZ);
          const toOld = Math.hypot(c.destX - pos.x, c.destZ - pos.z);
          if (jump > GOAL_JUMP_M && toOld > ARRIVED_M) {
            this.goalChanges++;
            if (angleBetween(yawTo(pos.x, pos.z, c.destX, c.destZ), yawTo(pos.x, pos.z, move.to.x, move.to.z)) > U_TURN_DEG) this.uTurns++;
          }
        }
        c.destSet = true;
        c.destX = move.to.x;
        c.destZ = move.to.z;
      }
    } else c.destSet = false;

    this.believableII(c, t, s, reply, seesHostile, away, engage, move, flee);

    // Flights.
    if (flee) {
      if (!c.fleeing) {
        c.fleeing = true;
        c.fleeStart = t;
        c.fledFrom.clear();
      }
      const from = s.targets.find((x) => x.id === flee.from);
      if (from) c.fledFrom.set(from.id, from.pos);
    } else if (c.fleeing) {
      c.fleeing = false;
      c.fleeEnd = t;
      this.flight(t - c.fleeStart);
    }

    // Investigations.
    if (inv) {
      // A fresher position of the same search (a squadmate's report) moves the spot, not the episode.
      if (!c.investigating) {
        c.investigating = true;
        c.invReached = false;
        c.invStarted = !seesHostile;
        if (t - c.fleeEnd <= FLED_CONTACT_S) {
          for (const p of c.fledFrom.values()) if (Math.hypot(p.x - inv.at.x, p.z - inv.at.z) <= FLED_CONTACT_M) this.backToFled++;
        }
      }
      c.invAt = inv.at;
      if (Math.hypot(pos.x - inv.at.x, pos.z - inv.at.z) <= REACHED_M) c.invReached = true;
    } else if (c.investigating) {
      if (c.invStarted && !seesHostile) {
        this.started++;
        if (c.invReached) this.startedReached++;
      }
      this.endInvestigation(c, seesHostile || engage !== undefined || flee !== undefined || away);
    }

    // Engagements: movement, fire pauses, shooters.
    if (engage) {
      c.engageTicks++;
      if (move) c.engageMoving++;
      if (!c.engaging) {
        c.engaging = true;
        c.engStart = t;
        c.engFired = false;
        c.engLastFire = t;
        c.engPauses = 0;
        c.lastFire = false;
      }
      if (engage.fire) {
        // A silence longer than CEASE_FIRE_S is no pause in a burst but a cease-fire (a target out
        // of range, a reload under cover): the firing before it is one stretch, the firing after another.
        if (c.engFired && t - c.engLastFire - this.dt > CEASE_FIRE_S) {
          c.engPauses--;
          this.closeFiring(c);
          c.engStart = t;
          c.engPauses = 0;
        }
        if (!c.engFired) c.engStart = t;
        c.engFired = true;
        c.engLastFire = t;
        if (c.squad !== '') {
          const key = `${c.squad}\u0000${engage.target}`;
          const n = (this.shooters.get(key) ?? 0) + 1;
          this.shooters.set(key, n);
          if (n > this.maxShooters) this.maxShooters = n;
        }
      } else if (c.lastFire) c.engPauses++;
      c.lastFire = engage.fire;
    } else if (c.engaging) this.endEngagement(c, t);

    // Crowd switching.
    const cls = behaviourClass(reply);
    c.prevCls = c.cls;
    if (c.reactFrom !== null) {
      if (t - c.reactT > REACTION_WINDOW_S || away) c.reactFrom = null;
      else if (cls !== c.reactFrom || (face !== undefined && angleBetween(face.yaw_deg, yawTo(pos.x, pos.z, c.reactX, c.reactZ)) <= TURN_TOLERANCE_DEG)) {
        this.reactions.push(t - c.reactT);
        c.reactFrom = null;
      }
    }
    if (c.cls !== '' && cls !== c.cls) {
      this.changes++;
      const key = `${c.cls}>${cls}`;
      this.switches.set(key, (this.switches.get(key) ?? 0) + 1);
    }
    c.cls = cls;

    // Statues: one reply, unchanged, while present.
    const counts = !away;
    if (replyText !== c.reply) {
      if (c.replyCounts && t - c.replySince > STATUE_S) this.statues++;
      c.reply = replyText;
      c.replySince = t;
      c.replyCounts = counts;
    }

    for (const i of reply.intents) {
      if (i.kind !== 'Emote') continue;
      this.emotes++;
      this.emoteNames.set(i.name, (this.emoteNames.get(i.name) ?? 0) + 1);
    }

    // Hearing: outside combat, a line from a target the character perceives asks for a turn toward it.
    for (const h of outside ? (s.heard ?? []) : []) {
      const from = s.targets.find((x) => x.id === h.from);
      if (from === undefined) continue;
      this.heardLines++;
      c.pending.push({ x: from.pos.x, z: from.pos.z, until: t + TURN_WITHIN_S });
    }
    if (c.pending.length > 0) {
      c.pending = c.pending.filter((p) => {
        if (face && angleBetween(face.yaw_deg, yawTo(pos.x, pos.z, p.x, p.z)) <= TURN_TOLERANCE_DEG) {
          this.heardTurned++;
          return false;
        }
        return t < p.until;
      });
    }

    if (move) c.moveT = t;
    if (logoff && !c.loggedOff) {
      c.loggedOff = true;
      this.logoffs++;
      if (t - c.moveT >= WIND_DOWN_S) this.woundDown++;
    }

    if (outside && c.squad !== '' && !away) {
      let list = this.members.get(c.squad);
      if (list === undefined) this.members.set(c.squad, (list = []));
      list.push(c);
    }
    c.lastT = t;
  }

  /**
   * A flight's length. One still under way when the run ends (`whole` false) counts for the
   * median (its length is at least this), not for the spread of lengths: its length is where
   * the run stopped, and a squad that took flight together would show as flights of one length.
   */
  private flight(len: number, whole = true): void {
    this.flights.push(len);
    if (!whole) return;
    this.wholeFlights++;
    const bin = Math.floor(len / FLIGHT_BIN_S);
    this.flightBins.set(bin, (this.flightBins.get(bin) ?? 0) + 1);
  }

  /** The figures of believable behaviour II that need this tick before the others update the character. */
  private believableII(
    c: Char,
    t: number,
    s: Snapshot,
    reply: TickResponse,
    seesHostile: boolean,
    away: boolean,
    engage: Extract<Intent, { kind: 'Engage' }> | undefined,
    move: Extract<Intent, { kind: 'MoveTo' }> | undefined,
    flee: Extract<Intent, { kind: 'Flee' }> | undefined,
  ): void {
    const pos = s.self_state.pos;
    c.away = away;
    // First sights: how far, when the first shot follows; a squad's first sighting for its other members.
    if (seesHostile && !c.saw) {
      let near = Infinity;
      for (const tg of s.targets) if (tg.hostile && tg.visible) near = Math.min(near, Math.hypot(tg.pos.x - pos.x, tg.pos.z - pos.z));
      c.sightT = t;
      c.sightFar = near >= FAR_SIGHT_M;
      c.sightShot = false;
      if (c.squad !== '') {
        const last = this.squadSawT.get(c.squad);
        if (last === undefined || t - last > SQUAD_QUIET_S) this.sightings.push({ squad: c.squad, t, by: s.agent as number, x: pos.x, z: pos.z });
      }
    }
    if (seesHostile && c.squad !== '') this.squadSawT.set(c.squad, t);
    c.saw = seesHostile;
    if (seesHostile && engage?.fire === true && !c.sightShot) {
      c.sightShot = true;
      if (c.sightFar) this.farShots.push(t - c.sightT);
    }
    // Flight bearings: never toward what is fled (the visible hostiles, else where the one fled from was last seen).
    if (flee !== undefined && move !== undefined) {
      const bx = move.to.x - pos.x;
      const bz = move.to.z - pos.z;
      const bl = Math.hypot(bx, bz);
      let toward = false;
      let any = false;
      const check = (x: number, z: number): void => {
        const dx = x - pos.x;
        const dz = z - pos.z;
        const dl = Math.hypot(dx, dz);
        if (bl < 1e-6 || dl < 1e-6) return;
        if ((bx * dx + bz * dz) / (bl * dl) > Math.cos((TOWARD_DEG * Math.PI) / 180)) toward = true;
      };
      for (const tg of s.targets) {
        if (!tg.hostile || !tg.visible) continue;
        any = true;
        check(tg.pos.x, tg.pos.z);
      }
      const fled = s.targets.find((x) => x.id === flee.from);
      if (fled !== undefined && fled.visible) {
        c.fledSeenX = fled.pos.x;
        c.fledSeenZ = fled.pos.z;
        c.fledSeen = true;
      }
      if (!any && c.fledSeen) check(c.fledSeenX, c.fledSeenZ);
      if (toward) this.towardThreat++;
    }
    // Followers: walking to their place beside the leader against standing with the squad.
    let follow = 0;
    if (c.squad !== '' && !away && engage === undefined && flee === undefined && !seesHostile) {
      if (reply.intents.some((i) => i.kind === 'Idle' && i.reason === 'with_squad')) follow = 2;
      else if (move !== undefined && move.speed !== 'sprint') follow = 1;
    }
    if (follow !== 0 && c.follow !== 0 && follow !== c.follow) this.followFlips++;
    c.follow = follow;
  }

  private endInvestigation(c: Char, interrupted: boolean): void {
    c.investigating = false;
    if (interrupted) return;
    this.investigations++;
    if (c.invReached) this.reached++;
  }

  /** Pauses count over the firing part of an engagement: from its first shot to its last, cease-fires apart. */
  private endEngagement(c: Char, t: number): void {
    c.engaging = false;
    if (c.engFired && !c.lastFire && t - c.engLastFire - this.dt > CEASE_FIRE_S) c.engPauses--;
    this.closeFiring(c);
  }

  /** Adds a stretch of firing (first shot to last, no cease-fire within) to the pause figure. */
  private closeFiring(c: Char): void {
    const len = c.engLastFire - c.engStart + this.dt;
    if (len >= MIN_ENGAGEMENT_S && c.engFired) {
      this.engagedSeconds += len;
      this.pauses += c.engPauses;
    }
  }

  private endStep(next: number): void {
    if (this.sightings.length > 0) {
      for (const sg of this.sightings) {
        for (const [id, m] of this.chars) {
          if (id === sg.by || m.squad !== sg.squad || m.saw || m.away || m.reactFrom !== null) continue;
          const from = m.lastT === sg.t ? m.prevCls : m.cls;
          if (m.lastT === sg.t && m.cls !== from) this.reactions.push(0);
          else {
            m.reactT = sg.t;
            m.reactFrom = from;
            m.reactX = sg.x;
            m.reactZ = sg.z;
          }
        }
      }
      this.sightings.length = 0;
    }
    for (const n of this.switches.values()) if (n >= ALIKE_MIN) this.alike += n;
    this.switches.clear();
    this.shooters.clear();
    for (const list of this.members.values()) {
      if (list.length < 2) continue;
      let sx = 0;
      let sz = 0;
      for (const m of list) {
        sx += m.x;
        sz += m.z;
      }
      for (const m of list) {
        const ox = (sx - m.x) / (list.length - 1);
        const oz = (sz - m.z) / (list.length - 1);
        this.squadDist.add(Math.hypot(m.x - ox, m.z - oz));
      }
    }
    this.members.clear();
    this.step = next;
  }

  finish(): Figures {
    this.endStep(this.step);
    for (const c of this.chars.values()) {
      if (c.fleeing) this.flight(c.lastT - c.fleeStart + this.dt, false);
      if (c.engaging) this.endEngagement(c, c.lastT + this.dt);
      // An investigation still under way when the run ends is neither reached nor failed.
      if (c.investigating) this.endInvestigation(c, true);
      if (c.replyCounts && c.lastT - c.replySince > STATUE_S) this.statues++;
    }
    let moving = 0;
    let engaged = 0;
    for (const c of this.chars.values()) {
      if (c.engageMoving === 0) continue;
      moving += c.engageMoving;
      engaged += c.engageTicks;
    }
    const hours = this.charSeconds / 3600;
    const r = (v: number): number => Math.round(v * 1000) / 1000;
    return {
      ticks: this.ticks,
      character_hours: r(hours),
      goal_changes_per_min: r(this.quietSeconds > 0 ? this.goalChanges / (this.quietSeconds / 60) : 0),
      u_turns_per_hour: r(this.quietSeconds > 0 ? this.uTurns / (this.quietSeconds / 3600) : 0),
      median_flight_s: median(this.flights),
      flee_to_investigate_same_contact: this.backToFled,
      engage_ticks_moving_share: engaged > 0 ? r(moving / engaged) : null,
      fire_pauses_per_10s: this.engagedSeconds > 0 ? r((this.pauses / this.engagedSeconds) * 10) : null,
      max_shooters_per_target_per_squad: this.maxShooters,
      alike_change_share: this.changes > 0 ? r(this.alike / this.changes) : null,
      investigations: this.investigations,
      investigations_reached_share: this.investigations > 0 ? r(this.reached / this.investigations) : null,
      statue_stretches: this.statues,
      emotes_per_hour: r(hours > 0 ? this.emotes / hours : 0),
      heard_lines: this.heardLines,
      heard_turn_share: this.heardLines > 0 ? r(this.heardTurned / this.heardLines) : null,
      logoffs: this.logoffs,
      logoffs_wound_down_share: this.logoffs > 0 ? r(this.woundDown / this.logoffs) : null,
      median_squad_distance_m: this.squadDist.median(),
      flights: this.flights.length,
      flight_modal_share: this.wholeFlights >= MIN_FLIGHTS ? r(Math.max(...this.flightBins.values()) / this.wholeFlights) : null,
      squad_reactions: this.reactions.length,
      median_squad_reaction_s: median(this.reactions),
      far_first_shots: this.farShots.length,
      median_far_first_shot_s: median(this.farShots),
      investigations_started: this.started,
      investigations_started_reached_share: this.started > 0 ? r(this.startedReached / this.started) : null,
      emotes: this.emotes,
      emote_names: Object.fromEntries([...this.emoteNames].sort((x, y) => y[1] - x[1])),
      emote_modal_share: this.emotes > 0 ? r(Math.max(...this.emoteNames.values()) / this.emotes) : null,
      follow_flips_per_hour: r(hours > 0 ? this.followFlips / hours : 0),
      flight_bearings_toward_threat: this.towardThreat,
    };
  }
}
