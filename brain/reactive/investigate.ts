import { distH, vec } from '../geometry.js';
import type { AgentState } from '../state.js';
import type { Intent, Target, Vec3 } from '../types.js';

/** How long a lost contact is still "seen recently", in game seconds. */
export const CONTACT_MEMORY_S = 45;
/** Close enough to the last known position to conclude the contact is gone. */
export const CONTACT_CLEARED_M = 2;

export function recordContact(a: AgentState, t: Target, time: number): void {
  a.contact = true;
  a.contactId = t.id;
  a.contactX = t.pos.x;
  a.contactY = t.pos.y;
  a.contactZ = t.pos.z;
  a.contactT = time;
  a.contactShared = false;
}

/** Closes the agent's contact when the hostile it was is among the targets, visible and dead (health 0). */
export function closeDeadContact(a: AgentState, targets: readonly Target[]): void {
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    if (t.id === a.contactId && t.hostile && t.visible && t.health !== undefined && t.health <= 0) {
      a.contact = false;
      return;
    }
  }
}

/** Whether the agent holds a contact recent enough to act on; forgets it once stale or reached. */
export function hasRecentContact(a: AgentState, pos: Vec3, time: number): boolean {
  if (!a.contact) return false;
  if (time - a.contactT > CONTACT_MEMORY_S || distH(pos.x, pos.z, a.contactX, a.contactZ) <= CONTACT_CLEARED_M) {
    a.contact = false;
    return false;
  }
  return true;
}

/** Investigate the last known position, moving there cautiously (the caller sets crouched). */
export function pushInvestigate(out: Intent[], a: AgentState): void {
  out.push({ kind: 'Investigate', at: vec(a.contactX, a.contactY, a.contactZ) });
  out.push({ kind: 'MoveTo', to: vec(a.contactX, a.contactY, a.contactZ), speed: 'walk' });
}
