import type { Vec3 } from './types.js';

/** Horizontal (x/z) distance: y is up, and arrival on a slope should not depend on it. */
export function distH(ax: number, az: number, bx: number, bz: number): number {
  const dx = bx - ax;
  const dz = bz - az;
  return Math.sqrt(dx * dx + dz * dz);
}

/** Compass yaw from a to b: 0 = +z (north), clockwise, in [0, 360). */
export function yawTo(ax: number, az: number, bx: number, bz: number): number {
  const deg = (Math.atan2(bx - ax, bz - az) * 180) / Math.PI;
  const n = deg < 0 ? deg + 360 : deg;
  return n >= 360 ? n - 360 : n;
}

/**
 * `x % m` for m > 0, bit for bit. V8 has no machine instruction for a float remainder and calls
 * out to C for every one; below m (most angles, most clocks) the remainder is x itself.
 */
export function rem(x: number, m: number): number {
  return x >= 0 && x < m ? x : x % m;
}

/** Rounds a coordinate to the centimetre so replies stay short and replays compare exactly. */
export function cm(v: number): number {
  return Math.round(v * 100) / 100;
}

export function vec(x: number, y: number, z: number): Vec3 {
  return { x: cm(x), y: cm(y), z: cm(z) };
}

/**
 * A point `dist` metres from `self`, directly away from `threat` on the horizontal plane. When
 * the two coincide there is no "away", so the character backs off opposite its heading.
 */
export function awayFrom(self: Vec3, threat: Vec3, headingDeg: number, dist: number): Vec3 {
  let dx = self.x - threat.x;
  let dz = self.z - threat.z;
  let len = Math.sqrt(dx * dx + dz * dz);
  if (len < 1e-6) {
    const r = ((headingDeg + 180) * Math.PI) / 180;
    dx = Math.sin(r);
    dz = Math.cos(r);
    len = 1;
  }
  return vec(self.x + (dx / len) * dist, self.y, self.z + (dz / len) * dist);
}
