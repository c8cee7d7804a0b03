import { distH } from '../geometry.js';
import type { SelfState, Target, TargetKind } from '../types.js';

/**
 * What one tick perceives, reduced to the few facts decisions need. One instance per Brain is
 * reused for every tick (tick is synchronous), so perceiving allocates nothing. It holds
 * references into the current request only: they are valid until the tick returns.
 */
export interface Perception {
  /** The most threatening visible hostile, or null. */
  threat: Target | null;
  threatDist: number;
  /** Visible hostiles, the threat included (the dead are not counted). */
  hostiles: number;
  /** Visible hostiles reported dead (`health` 0): no threat, and a contact with one of them is closed. */
  dead: number;
  /** Whether the character itself is among the targets (isSelf): the tick then reads them through withoutSelf(). */
  self: boolean;
  /** Nearest visible non-hostile player within FRIENDLY_RANGE_M, or null. */
  friendly: Target | null;
  /** Health lost since the previous tick (0 on the first tick or when healing). */
  damage: number;
  wounded: boolean;
  armed: boolean;
}

export function newPerception(): Perception {
  return { threat: null, threatDist: 0, hostiles: 0, dead: 0, self: false, friendly: null, damage: 0, wounded: false, armed: false };
}

export const FRIENDLY_RANGE_M = 15;

/**
 * Whether a target is the character itself: kind `ai` (what a mod registers its characters as)
 * and the character's own agent id. A mod whose perception lists every registered character
 * within range lists the character too, at its own position; a target of that id and another
 * kind is someone else (a game whose player ids and character ids overlap: player 7 beside
 * character 7) and counts.
 */
function isSelf(t: Target, agent: number): boolean {
  return t.id === agent && t.kind === 'ai';
}

/**
 * The targets without the character itself (isSelf): a character does not perceive, fear,
 * remember, flee from or hear itself. Called only when perceive() found it there (`p.self`),
 * so a mod that leaves the character out of its own targets pays for no copy and no scan.
 */
export function withoutSelf(targets: readonly Target[], agent: number): Target[] {
  return targets.filter((t) => !isSelf(t, agent));
}

/** How much a kind of hostile matters at equal distance: armed people first, animals last. */
function kindWeight(kind: TargetKind): number {
  switch (kind) {
    case 'player':
      return 1;
    case 'ai':
      return 0.9;
    case 'zombie':
      return 0.7;
    case 'animal':
      return 0.5;
    default:
      return 0.8;
  }
}

/**
 * Fills `p` from the snapshot's own state and targets. The threat is the visible hostile with the highest
 * weight / (distance + 5): nearest wins among equals, a player a little farther than a zombie
 * still wins, and ties go to the lower id so the choice never depends on list order. A hostile
 * whose `health` is 0 is dead: counted in `dead`, never the threat. The character itself
 * (isSelf, visible or not) is skipped and noted in `p.self`.
 */
export function perceive(self: SelfState, targets: readonly Target[], agent: number, prevHealth: number, first: boolean, p: Perception): void {
  let best: Target | null = null;
  let bestScore = -1;
  let bestDist = 0;
  let hostiles = 0;
  let dead = 0;
  let friendly: Target | null = null;
  let friendlyDist = FRIENDLY_RANGE_M;
  let me = false;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    if (isSelf(t, agent)) {
      me = true;
      continue;
    }
    if (!t.visible) continue;
    const d = distH(self.pos.x, self.pos.z, t.pos.x, t.pos.z);
    if (t.hostile) {
      // A body is no threat: a mod that keeps a killed hostile in its targets (health 0) must not see it shot at.
      if (t.health !== undefined && t.health <= 0) {
        dead++;
        continue;
      }
      hostiles++;
      const score = kindWeight(t.kind) / (d + 5);
      if (score > bestScore || (score === bestScore && best !== null && t.id < best.id)) {
        best = t;
        bestScore = score;
        bestDist = d;
      }
    } else if (t.kind === 'player' && d <= friendlyDist) {
      friendly = t;
      friendlyDist = d;
    }
  }
  p.threat = best;
  p.threatDist = bestDist;
  p.hostiles = hostiles;
  p.dead = dead;
  p.self = me;
  p.friendly = friendly;
  p.damage = first || self.health >= prevHealth ? 0 : prevHealth - self.health;
  p.wounded = self.health < 60 || self.blood < 3000;
  p.armed = self.has_weapon && self.ammo > 0;
}
