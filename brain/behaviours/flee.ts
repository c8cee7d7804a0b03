import { fleeMinS, pushFlight, startFlight } from '../conduct.js';
import { EV, remember } from '../memory.js';
import { cowardly } from '../population.js';
import { pushFlee } from '../reactive/combat.js';
import { fleeMargin } from '../utility.js';
import type { Behaviour, TickCtx } from './context.js';

/**
 * Whether a character facing a visible hostile runs: unarmed, a coward, or the odds against it.
 * A squad does not all run at once: someone who could fight holds while half are running.
 */
function wantsToFlee(c: TickCtx): boolean {
  const { a, p, sq } = c;
  const flagged = a.cowardFlag === 1;
  const coward = flagged || cowardly(a);
  let flee = !p.armed || coward || fleeMargin(a, p, c.st.health, c.sw.emotions, c.sw.human, c.why) > 0;
  if (flee && p.armed && !flagged && sq !== null && sq.members.size > 1) {
    if (c.squads.fleeingOthers(sq, a, c.time) >= Math.max(1, Math.floor(sq.members.size / 2))) {
      flee = false;
      if (c.wasMode !== 'engaging') c.counters.bump('block');
    }
  }
  return flee;
}

/** What every flight sets: sprinting away, or hiding (crouched, still) when there is no way out. */
export function fled(c: TickCtx, from: number, running = true): void {
  if (running) c.speed = 'sprint';
  else c.posture = 'crouched';
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

/**
 * A flight like a person's: kept for its least length (drawn per flight) once begun, through
 * the widest opening between the threats, trying the sides when blocked, hiding when cornered.
 */
export const flee: Behaviour = {
  name: 'flee',
  when: { human: true },
  applies: (c) => c.p.threat !== null && (wantsToFlee(c) || (c.wasMode === 'fleeing' && c.time - c.a.fleeT < fleeMinS(c.a))),
  act(c, out) {
    const { a, time } = c;
    const threat = c.p.threat!;
    if (c.wasMode !== 'fleeing') startFlight(a, time, threat.id);
    // Out of sight, the flight goes on from the last hostile it ran from (where it was last seen: the contact).
    a.fledId = threat.id;
    a.fledT = time;
    fled(c, threat.id, pushFlight(out, a, c.st, c.targets, threat.id, c.dt, c.sq, time));
  },
};
