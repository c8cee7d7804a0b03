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

/** How far outside a wall its corners' path nodes lie, and where a point pushed out of a wall lands. */
export const CORNER_MARGIN_M = 0.5;
/** Path nodes closer than this to the start are the start: a character standing on a corner node must not pick it again. */
const SAME_POINT_M = 1e-6;

/**
 * The nearest point outside every solid box: a point inside one is moved across its nearest
 * side (plus the margin), as a game's navigation snaps a destination inside a wall to the
 * nearest reachable spot. Repeats for boxes the moved point lands in (at most once per box).
 */
export function outsideWalls(p: Vec3, obstacles: readonly Obstacle[]): Vec3 {
  let q = p;
  for (let round = 0; round < obstacles.length; round++) {
    const box = obstacles.find((o) => !o.passable && inside(q, o));
    if (box === undefined) return q;
    const exits = [
      { d: q.x - box.min.x, x: box.min.x - CORNER_MARGIN_M, z: q.z },
      { d: box.max.x - q.x, x: box.max.x + CORNER_MARGIN_M, z: q.z },
      { d: q.z - box.min.z, x: q.x, z: box.min.z - CORNER_MARGIN_M },
      { d: box.max.z - q.z, x: q.x, z: box.max.z + CORNER_MARGIN_M },
    ].sort((a, b) => a.d - b.d);
    q = { x: exits[0]!.x, y: q.y, z: exits[0]!.z };
  }
  return q;
}

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
        if (!solid.some((b) => inside(corner, b)) && flatDistance(corner, from) > SAME_POINT_M) nodes.push(corner);
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
 * Moves from `from` toward `target` by at most `step` metres, around solid obstacles (never
 * through them) and straight through passable ones. A target inside a wall is reached at the
 * nearest point outside it.
 */
export function stepToward(from: Vec3, target: Vec3, step: number, obstacles: readonly Obstacle[]): Vec3 {
  const solid = obstacles.filter((o) => !o.passable);
  const to = solid.length === 0 ? target : outsideWalls(target, solid);
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
