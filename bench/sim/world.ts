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

/**
 * Moves from `from` toward `to` by at most `step` metres. A move that would end inside an
 * obstacle slides along one axis if it can, else stays: characters walk around walls only
 * as well as their brain steers them.
 */
export function stepToward(from: Vec3, to: Vec3, step: number, obstacles: readonly Obstacle[]): Vec3 {
  const dist = flatDistance(from, to);
  if (dist < 1e-9) return from;
  const k = Math.min(1, step / dist);
  const next = { x: from.x + (to.x - from.x) * k, y: to.y ?? from.y, z: from.z + (to.z - from.z) * k };
  if (!obstacles.some((o) => inside(next, o))) return next;
  const slideX = { x: next.x, y: from.y, z: from.z };
  if (!obstacles.some((o) => inside(slideX, o))) return slideX;
  const slideZ = { x: from.x, y: from.y, z: next.z };
  if (!obstacles.some((o) => inside(slideZ, o))) return slideZ;
  return from;
}

/** Yaw in degrees, 0 = +z (north), clockwise, in [0, 360). */
export function yawTo(from: Vec3, to: Vec3): number {
  const deg = (Math.atan2(to.x - from.x, to.z - from.z) * 180) / Math.PI;
  return (deg + 360) % 360;
}
