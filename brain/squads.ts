import { distH } from './geometry.js';
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
  /** The member with the lowest id: the one whose goals the squad follows. */
  leader: AgentState | null = null;
  /** Bumped when a member dies; members compare it with their own copy to notice the loss. */
  lossSeq = 0;
  /** Sum of the members' last positions, kept as they move: a centroid costs O(1), not a walk over members. */
  sumX = 0;
  sumY = 0;
  sumZ = 0;

  constructor(readonly id: string) {}
}

/** Squadmates only count as "running" when their last tick was this recent. */
const FRESH_S = 5;
/** Members further from their squad's centre than this (plus a loner's allowance) regroup. */
export const COHESION_M = 20;

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
    if (cur !== undefined && cur.id === squadId && cur.members.get(a.id) === a) return cur;
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
   * the agent knows. Returns true when that is a new contact for the agent (the `squad` counter).
   */
  adoptContact(sq: Squad, a: AgentState, time: number, maxAgeS: number): boolean {
    if (!sq.contact || sq.reporter === a.id || time - sq.contactT > maxAgeS) return false;
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
  moved(sq: Squad, a: AgentState, x: number, y: number, z: number): void {
    sq.sumX += x - a.x;
    sq.sumY += y - a.y;
    sq.sumZ += z - a.z;
  }

  /** Centre of the other members' last positions, into `this.centre` (n = 0 when alone). */
  centroid(sq: Squad, a: AgentState): Centre {
    const c = this.centre;
    const n = sq.members.size - 1;
    c.n = n;
    if (n <= 0) {
      c.x = 0;
      c.y = 0;
      c.z = 0;
      return c;
    }
    c.x = (sq.sumX - a.x) / n;
    c.y = (sq.sumY - a.y) / n;
    c.z = (sq.sumZ - a.z) / n;
    return c;
  }

  /**
   * Whether the agent has strayed: loners get a longer leash than social characters. One who
   * is already regrouping keeps going to half the leash, so it does not flicker at the edge.
   */
  strayed(x: number, z: number, sociability: number, regrouping: boolean): boolean {
    const c = this.centre;
    const leash = (COHESION_M + 30 * (1 - sociability)) * (regrouping ? 0.5 : 1);
    return c.n > 0 && distH(x, z, c.x, c.z) > leash;
  }
}
