import { pushFlight, startFlight } from '../conduct.js';
import { EV, remember } from '../memory.js';
import { cowardly } from '../population.js';
import { pushFlee } from '../reactive/combat.js';
import { fleeMargin } from '../utility.js';
import type { Behaviour, TickCtx } from './context.js';

/** A flight is kept at least this long even when the odds turn (human_factors on). */
export const FLEE_KEEP_S = 8;

/**
 * Whether a character facing a visible hostile runs: unarmed, a coward, or the odds against it.
 * A squad does not all run at once: someone who could fight holds while half are running.
 */
function wantsToFlee(c: TickCtx): boolean {
  const { a, p, prof, sq } = c;
  const coward = prof.coward === true || cowardly(a);
  let flee = !p.armed || coward || fleeMargin(a, p, c.st.health, c.sw.emotions, c.sw.human) > 0;
  if (flee && p.armed && prof.coward !== true && sq !== null && sq.members.size > 1) {
    if (c.squads.fleeingOthers(sq, a, c.time) >= Math.max(1, Math.floor(sq.members.size / 2))) {
      flee = false;
      if (c.wasMode !== 'engaging') c.counters.bump('block');
    }
  }
  return flee;
}

function fled(c: TickCtx, from: number): void {
  c.speed = 'sprint';
  c.mode = 'fleeing';
  if (c.wasMode !== 'fleeing') remember(c.a, EV.fled, c.time, from);
}

/** Purely reactive: straight away from the threat at a sprint, for as long as it is seen. */
export const fleeReactive: Behaviour = {
  name: 'flee',
  when: { human: false },
  applies: (c) => c.p.threat !== null && wantsToFlee(c),
  act(c, out) {
    const threat = c.p.threat!;
    pushFlee(out, c.st, threat);
    fled(c, threat.id);
  },
};

/** A flight like a person's: kept at least FLEE_KEEP_S once begun, away from every threat combined. */
export const flee: Behaviour = {
  name: 'flee',
  when: { human: true },
  applies: (c) => c.p.threat !== null && (wantsToFlee(c) || (c.wasMode === 'fleeing' && c.time - c.a.fleeT < FLEE_KEEP_S)),
  act(c, out) {
    const { a, time } = c;
    const threat = c.p.threat!;
    if (c.wasMode !== 'fleeing') startFlight(a, time, threat.id);
    a.fledT = time;
    pushFlight(out, a, c.s, threat.id, c.dt, c.sq, time);
    fled(c, threat.id);
  },
};
