import { awayFrom, cm, yawTo } from '../geometry.js';
import type { Intent, Posture, SelfState, Target } from '../types.js';

/** BRAIN.md: crouched under 15 m, prone beyond 120 m, else standing. */
export function combatPosture(dist: number): Posture {
  if (dist < 15) return 'crouched';
  if (dist > 120) return 'prone';
  return 'standing';
}

/** Beyond this a rifle shot is a waste: the character still engages (aims, tracks) but holds fire. */
export const FIRE_RANGE_M = 400;

/** How far a fleeing character runs per decision: far enough to break contact, near enough to re-decide. */
export const FLEE_DISTANCE_M = 40;

/** Whether a purely reactive character fires: at anything within FIRE_RANGE_M. */
export function inFireRange(dist: number): boolean {
  return dist <= FIRE_RANGE_M;
}

export function pushEngage(out: Intent[], self: SelfState, threat: Target, fire: boolean): void {
  out.push({ kind: 'Face', yaw_deg: cm(yawTo(self.pos.x, self.pos.z, threat.pos.x, threat.pos.z)) });
  out.push({ kind: 'Engage', target: threat.id, fire });
}

export function pushFlee(out: Intent[], self: SelfState, threat: Target): void {
  out.push({ kind: 'Flee', from: threat.id });
  out.push({ kind: 'MoveTo', to: awayFrom(self.pos, threat.pos, self.heading_deg, FLEE_DISTANCE_M), speed: 'sprint' });
}
