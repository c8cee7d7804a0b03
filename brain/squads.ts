import { distH } from './geometry.js';
import { noise } from './prng.js';
import type { AgentState } from './state.js';
import type { Target } from './types.js';

/**
 * Squads: agents that name the same `snapshot.squad` share sightings, keep loosely together,
 * and hold some nerve when others run. This is the one place where agents influence each
 * other; the effect depends only on the order ticks arrive in, never on wall time. Squads
 * point at agents; agents hold only the squad id, so agent state stays plain data.
 */
export interface Centre {
  x: number;
  y: number;
  z: number;
  n: number;
}

export class Squad {
  readonly members = new Map<number, AgentState>();
  /** The members whose mode is 'fleeing': fleeingOthers walks these, not every member of a big squad. */
  readonly fleeing = new Set<AgentState>();
  contact = false;
  contactId = 0;
  contactX = 0;
  contactY = 0;
  contactZ = 0;
  contactT = 0;
  reporter = 0;
  /**
   * The callout of the squad's current sighting: who noticed first, where it stood, when. A
   * sighting after CALLOUT_QUIET_S without one is a new callout.
   */
  calloutBy = 0;
  calloutX = 0;
  calloutY = 0;
  calloutZ = 0;
  calloutT = -1e9;
  /** When the leader last moved (its followers stand with it only once it has stood a while). */
  leaderMovedT = -1e9;
  /** The member with the lowest id: the one whose goals the squad follows. */
  leader: AgentState | null = null;
  /** Bumped when a member dies; members compare it with their own copy to notice the loss. */
  lossSeq = 0;
  /** Sum of the members' last positions, kept as they move: a centroid costs O(1), not a walk over members. */
  sumX = 0;
  sumY = 0;
  sumZ = 0;
  /**
   * The squad's way out: a bearing (a unit vector) away from the threats, taken by the first
   * member to flee, and when. For a while every member running from the same threats takes it,
   * so a squad flees together instead of scattering, each from where it stands.
   */
  fleeX = 0;
  fleeZ = 0;
  fleeT = -1e9;

  constructor(readonly id: string) {}
}

/** A member's sighting this long after the squad's last one is called out afresh. */
export const CALLOUT_QUIET_S = 10;
/** Squadmates take up a callout after HEED_MIN_S..HEED_MAX_S, each at its own delay (shorter for the calm). */
export const HEED_MIN_S = 0.3;
export const HEED_MAX_S = 2;
/** The leader counts as moving when it went this far since its last tick. */
const LEADER_STEP_M = 0.3;

/** How long `a` takes to take up the callout made at `calloutT`: per member and per callout. */
export function heedDelay(a: AgentState, calloutT: number): number {
  if (a.heedFor !== calloutT) {
    a.heedN = noise(a.id + 11, calloutT);
    a.heedFor = calloutT;
  }
  return HEED_MIN_S + (HEED_MAX_S - HEED_MIN_S) * (0.7 * a.heedN + 0.3 * a.nrv);
}

/** Squadmates only count as "running" when their last tick was this recent. */
const FRESH_S = 5;
/** Members further from their squad's centre than this (plus a loner's allowance) regroup. */
export const COHESION_M = 20;

/** The leash: loners get a longer one than social characters. */
function leashOf(sociability: number): number {
  return COHESION_M + 30 * (1 - sociability);
}

export class Squads {
  private readonly byId = new Map<string, Squad>();
  /** Each member's squad by agent id: a number lookup per tick instead of hashing the request's fresh squad string. */
  private readonly ofAgent = new Map<number, Squad>();
  /** Output of centroid(): reused, valid until the next call. */
  readonly centre: Centre = { x: 0, y: 0, z: 0, n: 0 };

  get(id: string): Squad | undefined {
    return this.byId.get(id);
  }

  /** Puts the agent in `squadId` ('' = none), leaving its previous squad. */
  join(a: AgentState, squadId: string, fresh: boolean): Squad | null {
    const cur = this.ofAgent.get(a.id);
    if (cur !== undefined && cur.id === squadId && cur.members.get(a.id) === a) {
      // A lower id back after a silence (see leaderOf) leads again.
      if (cur.leader !== null && a.id < cur.leader.id) cur.leader = a;
      return cur;
    }
    if (a.squad !== squadId) this.leave(a);
    if (squadId === '') return null;
    let sq = this.byId.get(squadId);
    if (sq === undefined) {
      sq = new Squad(squadId);
      this.byId.set(squadId, sq);
    }
    if (!sq.members.has(a.id)) {
      sq.members.set(a.id, a);
      if (sq.leader === null || a.id < sq.leader.id) sq.leader = a;
      if (a.mode === 'fleeing') sq.fleeing.add(a);
      sq.sumX += a.x;
      sq.sumY += a.y;
      sq.sumZ += a.z;
      // A new member does not mourn losses from before it joined; a restored one keeps its count.
      if (fresh || a.lossSeq > sq.lossSeq) a.lossSeq = sq.lossSeq;
    }
    a.squad = sq.id;
    this.ofAgent.set(a.id, sq);
    return sq;
  }

  leave(a: AgentState): void {
    if (a.squad === '') return;
    const sq = this.byId.get(a.squad);
    if (sq !== undefined && sq.members.get(a.id) === a) {
      sq.members.delete(a.id);
      sq.fleeing.delete(a);
      sq.sumX -= a.x;
      sq.sumY -= a.y;
      sq.sumZ -= a.z;
      this.ofAgent.delete(a.id);
      if (sq.leader === a) {
        sq.leader = null;
        for (const m of sq.members.values()) if (sq.leader === null || m.id < sq.leader.id) sq.leader = m;
      }
      if (sq.members.size === 0) this.byId.delete(sq.id);
    }
  }

  /**
   * The squad's leader, as `a` (ticking now) sees it: the member with the lowest id among `a`
   * and those that ticked within FRESH_S.
   * One gone silent (dead or gone, as far as the brain can tell) hands over to the next, so
   * the squad does not gather at its last position.
   */
  leaderOf(sq: Squad, a: AgentState, time: number): AgentState | null {
    const l = sq.leader;
    if (l === null || l === a || time - l.lastT <= FRESH_S) return l;
    let next: AgentState | null = null;
    for (const m of sq.members.values()) if ((m === a || time - m.lastT <= FRESH_S) && (next === null || m.id < next.id)) next = m;
    if (next !== null) sq.leader = next;
    return sq.leader;
  }

  /** A member died: the others will notice on their next tick. */
  mourn(a: AgentState): void {
    const sq = this.byId.get(a.squad);
    if (sq !== undefined) {
      sq.lossSeq++;
      a.lossSeq = sq.lossSeq;
      this.leave(a);
    }
    a.squad = '';
  }

  clear(): void {
    this.byId.clear();
    this.ofAgent.clear();
  }

  report(sq: Squad, a: AgentState, t: Target, time: number): void {
    if (!sq.contact || time - sq.contactT > CALLOUT_QUIET_S) {
      sq.calloutBy = a.id;
      sq.calloutX = a.x;
      sq.calloutY = a.y;
      sq.calloutZ = a.z;
      sq.calloutT = time;
    }
    sq.contact = true;
    sq.contactId = t.id;
    sq.contactX = t.pos.x;
    sq.contactY = t.pos.y;
    sq.contactZ = t.pos.z;
    sq.contactT = time;
    sq.reporter = a.id;
  }

  /**
   * Takes over a squadmate's sighting as this agent's lost contact when it is newer than what
   * the agent knows (`staggered`: only once its own heedDelay after the callout has passed).
   * Returns true when that is a new contact for the agent (the `squad` counter).
   */
  adoptContact(sq: Squad, a: AgentState, time: number, maxAgeS: number, staggered: boolean): boolean {
    if (!sq.contact || sq.reporter === a.id || time - sq.contactT > maxAgeS) return false;
    // With human factors, one running for its life takes in no news: it flees from what it saw itself.
    if (staggered && a.mode === 'fleeing') return false;
    // A callout is heard and taken up after a moment, not on the tick it is made (human factors on).
    if (staggered && sq.calloutBy !== a.id && time - sq.calloutT < heedDelay(a, sq.calloutT)) return false;
    if (a.contact && a.contactT >= sq.contactT) return false;
    // A fresher position of the contact the agent already follows is an update, not news.
    const news = !a.contact || a.contactId !== sq.contactId;
    a.contact = true;
    a.contactId = sq.contactId;
    a.contactX = sq.contactX;
    a.contactY = sq.contactY;
    a.contactZ = sq.contactZ;
    a.contactT = sq.contactT;
    a.contactShared = true;
    return news;
  }

  /** Other members fleeing as of their last (recent) tick. */
  fleeingOthers(sq: Squad, a: AgentState, time: number): number {
    let n = 0;
    for (const m of sq.fleeing) {
      if (m !== a && time - m.lastT <= FRESH_S) n++;
    }
    return n;
  }

  /** The squad the agent is a member of, if any. */
  of(a: AgentState): Squad | undefined {
    return this.ofAgent.get(a.id);
  }

  /** Call after a member of `sq` changed mode, so `fleeing` stays the members whose mode is 'fleeing'. */
  modeChanged(sq: Squad, a: AgentState): void {
    if (sq.members.get(a.id) !== a) return;
    if (a.mode === 'fleeing') sq.fleeing.add(a);
    else sq.fleeing.delete(a);
  }

  /** Records a new position of a member of `sq`; call before the agent's x/y/z are overwritten. */
  moved(sq: Squad, a: AgentState, x: number, y: number, z: number, time: number): void {
    if (sq.leader === a && distH(x, z, a.x, a.z) > LEADER_STEP_M) sq.leaderMovedT = time;
    sq.sumX += x - a.x;
    sq.sumY += y - a.y;
    sq.sumZ += z - a.z;
  }

  /**
   * Where the agent keeps with its squad, into `this.centre` (n = the other members, 0 when
   * alone): a member's is its leader's last position, so the squad has one destination and
   * moves together; the leader's (and any member's whose leader has not ticked recently) is
   * the centre of the others' last positions.
   */
  centroid(sq: Squad, a: AgentState, time: number): Centre {
    const c = this.centre;
    const n = sq.members.size - 1;
    c.n = n;
    if (n <= 0) {
      c.x = 0;
      c.y = 0;
      c.z = 0;
      return c;
    }
    const l = this.leaderOf(sq, a, time);
    if (l !== null && l !== a && time - l.lastT <= FRESH_S) {
      c.x = l.x;
      c.y = l.y;
      c.z = l.z;
      return c;
    }
    c.x = (sq.sumX - a.x) / n;
    c.y = (sq.sumY - a.y) / n;
    c.z = (sq.sumZ - a.z) / n;
    return c;
  }

  /**
   * Whether most of the other members (those that ticked recently, searchers and those away
   * from the keyboard aside: they come back) are beyond the agent's leash: a leader left alone, not one with a
   * member or two away. `back` = the leader has turned back already: then half the leash, so
   * it does not flicker at the edge.
   */
  leftBehind(sq: Squad, a: AgentState, x: number, z: number, time: number, back: boolean): boolean {
    const leash = leashOf(a.social) * (back ? 0.5 : 1);
    let n = 0;
    let far = 0;
    for (const m of sq.members.values()) {
      // Searchers come back when their search ends; members away from the keyboard catch up when back.
      if (m === a || time - m.lastT > FRESH_S || m.mode === 'investigating' || m.mode === 'afk' || m.mode === 'on_break') continue;
      n++;
      if (distH(x, z, m.x, m.z) > leash) far++;
    }
    return 2 * far > n && n > 0;
  }

  /** Whether at least half of the other members (those that ticked recently) are fighting, fleeing or searching. */
  mostlyBusy(sq: Squad, a: AgentState, time: number): boolean {
    let n = 0;
    let busy = 0;
    for (const m of sq.members.values()) {
      if (m === a || time - m.lastT > FRESH_S) continue;
      n++;
      if (m.mode === 'engaging' || m.mode === 'fleeing' || m.mode === 'investigating') busy++;
    }
    return 2 * busy >= n && n > 0;
  }

  /**
   * Whether the agent has strayed from `this.centre` (set by centroid()): beyond its leash, or,
   * already regrouping, beyond half of it, so it does not flicker at the edge.
   */
  strayed(x: number, z: number, sociability: number, regrouping: boolean): boolean {
    const c = this.centre;
    const leash = leashOf(sociability) * (regrouping ? 0.5 : 1);
    return c.n > 0 && distH(x, z, c.x, c.z) > leash;
  }
}
