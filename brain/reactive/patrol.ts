import { distH, vec } from '../geometry.js';
import type { AgentState } from '../state.js';
import type { Intent, Vec3 } from '../types.js';

/** BRAIN.md: the next waypoint becomes current within 1.5 m (horizontal) of the current one. */
export const ARRIVAL_M = 1.5;

/**
 * Walks a route: MoveTo the current waypoint, advancing (cyclically) on arrival. The index is
 * clamped when the mod sends a shorter route than before.
 */
export function pushPatrol(out: Intent[], a: AgentState, pos: Vec3, route: Vec3[]): void {
  let i = a.waypoint;
  if (i >= route.length || i < 0) i = 0;
  let wp = route[i]!;
  if (distH(pos.x, pos.z, wp.x, wp.z) <= ARRIVAL_M) {
    i = (i + 1) % route.length;
    wp = route[i]!;
  }
  a.waypoint = i;
  out.push({ kind: 'MoveTo', to: vec(wp.x, wp.y, wp.z), speed: 'walk' });
}
