import type { AgentState } from './state.js';
import type { Perception } from './reactive/perception.js';
import type { WhyRecorder } from './behaviours/why.js';

/**
 * Fight or flight for an armed character who is not a coward, as competing scores. With one
 * hostile, no fear and health of at least 60 the engage score always wins, so BRAIN.md's
 * "armed → Engage" row holds; outnumbered, hurt, frightened or timid characters tip over.
 * Fear and anger are zero unless emotional_events is on; fatigue unless human_factors is on.
 * `why`, on an explained tick, is given both scores as they were compared.
 */
export function fleeMargin(a: AgentState, p: Perception, health: number, emotions: boolean, fatigue: boolean, why: WhyRecorder | null = null): number {
  const fear = emotions ? a.fear : 0;
  const anger = emotions ? a.anger : 0;
  const tired = fatigue ? a.fatigue : 0;
  const brave = a.brave;
  const h = health < 0 ? 0 : health > 100 ? 1 : health / 100;
  const engage = 0.5 + 0.5 * brave + 0.3 * h + 0.35 * anger - 0.15 * tired;
  const flee = 0.3 * (1 - brave) + 0.25 * (p.hostiles - 1) + 0.6 * fear + 0.5 * (1 - h);
  if (why !== null) {
    why.weigh('engage', engage);
    why.weigh('flee', flee);
  }
  return flee - engage;
}
