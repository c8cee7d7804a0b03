import { vec, distH } from '../geometry.js';
import { needy } from '../goals.js';
import { tiredSpeed } from '../human-factors.js';
import { EV, remember } from '../memory.js';
import { noise } from '../prng.js';
import type { Centre } from '../squads.js';
import type { Intent, Speed } from '../types.js';
import type { Behaviour, TickCtx } from './context.js';

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
/** A member stands with its squad only once the leader has stood this long: no stop-start behind a walking leader. */
const FOLLOW_HALT_S = 10;
/**
 * A leader left behind (most of its squad beyond the leash) keeps its own way this long before
 * it turns back: a squad lagging a few steps catches up on its own.
 */
const LEADER_LEASH_S = 10;
/** A member this far from where it keeps with its squad sprints back rather than jogs (human_factors on). */
const REGROUP_SPRINT_M = 40;
/** strayT when the leader is not left behind. */
export const NEVER_T = -1e9;

/** Jogs to `c` (sprints beyond REGROUP_SPRINT_M, tired permitting, with human factors): the `regroup` goal when goals are on. */
function headBack(c: TickCtx, centre: Centre, out: Intent[], human: boolean, goals: boolean): Speed {
  const a = c.a;
  if (goals && a.goal !== 'regroup') {
    a.goal = 'regroup';
    a.goalT = c.time;
    c.counters.bump('plan');
    remember(a, EV.plan, c.time, 0);
  }
  const pos = c.st.pos;
  const want: Speed = distH(pos.x, pos.z, centre.x, centre.z) > REGROUP_SPRINT_M ? 'sprint' : 'jog';
  const speed = human ? tiredSpeed(a, want) : 'jog';
  out.push({ kind: 'MoveTo', to: vec(centre.x, centre.y, centre.z), speed });
  return speed;
}

/** Whether the member has strayed from where it keeps with its squad (the centre is left in squads.centre). */
function strayed(c: TickCtx): boolean {
  c.squads.centroid(c.sq!, c.a, c.time);
  const pos = c.st.pos;
  return c.squads.strayed(pos.x, pos.z, c.a.social, c.a.mode === 'regrouping');
}

/** Keeps the member's own place beside where it keeps with the squad: jog when far, walk when near, stand when there and the leader stands. */
function follow(c: TickCtx, leader: Centre, out: Intent[], human: boolean): Speed | null {
  const a = c.a;
  let dx = a.followDX;
  if (dx !== dx) {
    const angle = 2 * Math.PI * noise(a.id, 6);
    const r = FOLLOW_MIN_M + (FOLLOW_MAX_M - FOLLOW_MIN_M) * noise(a.id, 7);
    dx = a.followDX = Math.sin(angle) * r;
    a.followDZ = Math.cos(angle) * r;
  }
  const tx = leader.x + dx;
  const tz = leader.z + a.followDZ;
  const d = distH(c.st.pos.x, c.st.pos.z, tx, tz);
  // While the leader is on the move (halts shorter than FOLLOW_HALT_S included) the member keeps going with it.
  const leaderMoving = c.time - c.sq!.leaderMovedT < FOLLOW_HALT_S;
  if (!leaderMoving && d <= (a.mode === 'traveling' ? FOLLOW_ARRIVE_M : FOLLOW_SLACK_M)) {
    out.push({ kind: 'Idle', reason: 'with_squad' });
    return null;
  }
  const want: Speed = d > 20 ? 'jog' : 'walk';
  const speed = human ? tiredSpeed(a, want) : want;
  out.push({ kind: 'MoveTo', to: vec(tx, leader.y, tz), speed });
  return speed;
}

/**
 * The squad moves together: the leader keeps its route and goals, the others keep with the
 * leader (regrouping when strayed, else at their own place beside it).
 */
function followLeader(human: boolean): Behaviour {
  return {
    name: 'follow_leader',
    when: { goals: true, human },
    applies(c) {
      const { sq, a } = c;
      if (sq === null) return false;
      const ld = c.squads.leaderOf(sq, a, c.time);
      return ld !== null && ld !== a && !needy(a, c.st) && c.squads.centroid(sq, a, c.time).n > 0;
    },
    act(c, out) {
      if (strayed(c)) {
        c.speed = headBack(c, c.squads.centre, out, human, true);
        c.mode = 'regrouping';
      } else {
        c.speed = follow(c, c.squads.centre, out, human);
        c.mode = c.speed === null ? 'idle' : 'traveling';
      }
    },
  };
}

/**
 * The leader keeps its own route and goals while the squad keeps up. Left behind for
 * LEADER_LEASH_S, it turns back to the others (a leader that turned back at once would U-turn
 * whenever its squad lagged a few steps), and once with them it stands by while most of them
 * fight, flee or search, rather than walk off and have to turn back again.
 */
function leaderWaits(human: boolean): Behaviour {
  return {
    name: 'leader_waits',
    when: { goals: true, human },
    applies(c) {
      const { sq, a, time } = c;
      if (sq === null || c.squads.leaderOf(sq, a, time) !== a || needy(a, c.st)) return false;
      const back = a.strayT !== NEVER_T && time - a.strayT >= LEADER_LEASH_S;
      if (!c.squads.leftBehind(sq, a, c.st.pos.x, c.st.pos.z, time, back)) {
        if (back && c.squads.mostlyBusy(sq, a, time)) {
          c.plannedSpeed = 'stand';
          return true;
        }
        a.strayT = NEVER_T;
        return false;
      }
      if (a.strayT === NEVER_T) a.strayT = time;
      if (time - a.strayT < LEADER_LEASH_S) return false;
      c.plannedSpeed = null;
      return true;
    },
    act(c, out) {
      if (c.plannedSpeed === 'stand') out.push({ kind: 'Idle', reason: 'with_squad' });
      else c.speed = headBack(c, c.squads.centroid(c.sq!, c.a, c.time), out, human, true);
      c.mode = 'regrouping';
    },
  };
}

/** A member that has drifted from its squad heads back (goals on: not while a need comes first). */
function regroup(human: boolean, goals: boolean): Behaviour {
  return {
    name: 'regroup',
    when: { goals, human },
    applies: (c) => c.sq !== null && !(goals && needy(c.a, c.st)) && strayed(c),
    act(c, out) {
      c.speed = headBack(c, c.squads.centre, out, human, goals);
      c.mode = 'regrouping';
    },
  };
}

export const followLeaderHuman = followLeader(true);
export const followLeaderPlain = followLeader(false);
export const leaderWaitsHuman = leaderWaits(true);
export const leaderWaitsPlain = leaderWaits(false);
export const regroupHumanGoals = regroup(true, true);
export const regroupHuman = regroup(true, false);
export const regroupGoals = regroup(false, true);
export const regroupPlain = regroup(false, false);
