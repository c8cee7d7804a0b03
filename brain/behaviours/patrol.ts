import { detour, pausedAtWaypoint } from '../conduct.js';
import { needy } from '../goals.js';
import { pushPatrol } from '../reactive/patrol.js';
import type { Behaviour, TickCtx } from './context.js';

/** A route of two waypoints or more is walked (with goals on, unless a need comes first). */
function hasRoute(c: TickCtx, goals: boolean): boolean {
  const route = c.s.route;
  return route !== undefined && route.length >= 2 && !(goals && needy(c.a, c.st));
}

/** Purely reactive: walk to the current waypoint, the next one on arrival. */
function patrolPlain(goals: boolean): Behaviour {
  return {
    name: 'patrol',
    when: { human: false, goals },
    applies: (c) => hasRoute(c, goals),
    act(c, out) {
      c.mode = 'patrolling';
      c.speed = 'walk';
      pushPatrol(out, c.a, c.st.pos, c.s.route!);
    },
  };
}

/** A guard's patrol: a pause at a waypoint now and then, a detour when stuck, giving up a waypoint it cannot reach. */
function patrolHuman(goals: boolean): Behaviour {
  return {
    name: 'patrol',
    when: { human: true, goals },
    applies: (c) => hasRoute(c, goals),
    act(c, out) {
      const { a, time } = c;
      const pos = c.st.pos;
      const route = c.s.route!;
      c.mode = 'patrolling';
      if (pausedAtWaypoint(a, pos, route, time)) {
        out.push({ kind: 'Idle', reason: 'looking_around' });
        return;
      }
      c.speed = 'walk';
      const wp = route[a.waypoint >= 0 && a.waypoint < route.length ? a.waypoint : 0]!;
      const how = detour(out, a, pos, wp.x, wp.z, 'walk', time, c.wasMode === 'patrolling');
      if (how === 'give_up') a.waypoint = (a.waypoint + 1) % route.length;
      if (how !== 'detour') pushPatrol(out, a, pos, route);
    },
  };
}

export const patrolReactive = patrolPlain(false);
export const patrolReactiveGoals = patrolPlain(true);
export const patrol = patrolHuman(false);
export const patrolGoals = patrolHuman(true);
