import type { Vec3 } from '../../brain/types.js';
import type { Obstacle } from './scenario.js';

/** Horizontal (x/z) distance: y is up and the brain reasons on the ground plane. */
export function flatDistance(a: Vec3, b: Vec3): number {
  return Math.hypot(a.x - b.x, a.z - b.z);
}

/** Whether the segment a→b on the ground plane crosses an axis-aligned box (slab test). */
export function segmentHitsBox(a: Vec3, b: Vec3, box: Obstacle): boolean {
  let t0 = 0;
  let t1 = 1;
  const d = { x: b.x - a.x, z: b.z - a.z };
  for (const axis of ['x', 'z'] as const) {
    const origin = a[axis];
    const dir = d[axis];
    const lo = box.min[axis];
    const hi = box.max[axis];
    if (Math.abs(dir) < 1e-12) {
      if (origin < lo || origin > hi) return false;
      continue;
    }
    let ta = (lo - origin) / dir;
    let tb = (hi - origin) / dir;
    if (ta > tb) [ta, tb] = [tb, ta];
    t0 = Math.max(t0, ta);
    t1 = Math.min(t1, tb);
    if (t0 > t1) return false;
  }
  return true;
}

export function lineOfSight(a: Vec3, b: Vec3, obstacles: readonly Obstacle[]): boolean {
  for (const box of obstacles) if (segmentHitsBox(a, b, box)) return false;
  return true;
}

function inside(p: Vec3, box: Obstacle): boolean {
  return p.x >= box.min.x && p.x <= box.max.x && p.z >= box.min.z && p.z <= box.max.z;
}

const CORNER_MARGIN_M = 0.5;

function clear(a: Vec3, b: Vec3, solid: readonly Obstacle[]): boolean {
  for (const o of solid) if (segmentHitsBox(a, b, o)) return false;
  return true;
}

/**
 * The first waypoint of the shortest way from `from` to `to` around solid boxes, by
 * Dijkstra over the boxes' corners (pushed out by a margin): what a game's own navigation
 * would do for a character told to move somewhere behind a wall.
 */
function firstWaypoint(from: Vec3, to: Vec3, solid: readonly Obstacle[]): Vec3 | null {
  const nodes: Vec3[] = [from, to];
  for (const o of solid) {
    for (const x of [o.min.x - CORNER_MARGIN_M, o.max.x + CORNER_MARGIN_M]) {
      for (const z of [o.min.z - CORNER_MARGIN_M, o.max.z + CORNER_MARGIN_M]) {
        const corner = { x, y: from.y, z };
        if (!solid.some((b) => inside(corner, b))) nodes.push(corner);
      }
    }
  }
  const dist = nodes.map(() => Infinity);
  const prev = nodes.map(() => -1);
  const done = nodes.map(() => false);
  dist[0] = 0;
  for (;;) {
    let u = -1;
    for (let i = 0; i < nodes.length; i++) if (!done[i] && dist[i]! < Infinity && (u < 0 || dist[i]! < dist[u]!)) u = i;
    if (u < 0) return null;
    if (u === 1) break;
    done[u] = true;
    for (let v = 0; v < nodes.length; v++) {
      if (done[v] || v === u) continue;
      const d = dist[u]! + flatDistance(nodes[u]!, nodes[v]!);
      if (d < dist[v]! && clear(nodes[u]!, nodes[v]!, solid)) {
        dist[v] = d;
        prev[v] = u;
      }
    }
  }
  let node = 1;
  while (prev[node] !== 0) node = prev[node]!;
  return nodes[node]!;
}

/**
 * Moves from `from` toward `to` by at most `step` metres, around solid obstacles (never
 * through them) and straight through passable ones.
 */
export function stepToward(from: Vec3, to: Vec3, step: number, obstacles: readonly Obstacle[]): Vec3 {
  const solid = obstacles.filter((o) => !o.passable);
  const goal = solid.length === 0 || clear(from, to, solid) ? to : firstWaypoint(from, to, solid);
  if (!goal) return from;
  const dist = flatDistance(from, goal);
  if (dist < 1e-9) return from;
  const k = Math.min(1, step / dist);
  return { x: from.x + (goal.x - from.x) * k, y: goal === to ? to.y : from.y, z: from.z + (goal.z - from.z) * k };
}

/** Yaw in degrees, 0 = +z (north), clockwise, in [0, 360). */
export function yawTo(from: Vec3, to: Vec3): number {
  const deg = (Math.atan2(to.x - from.x, to.z - from.z) * 180) / Math.PI;
  return (deg + 360) % 360;
}
