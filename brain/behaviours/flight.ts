import { flightGoesOn, pushFlight } from '../conduct.js';
import type { Behaviour } from './context.js';

/** A flight under way goes on with the threat out of sight: long enough, and far enough, to look meant. */
export const flightGoesOnBehaviour: Behaviour = {
  name: 'flight_goes_on',
  when: { human: true },
  applies: (c) => flightGoesOn(c.a, c.st.pos.x, c.st.pos.z, c.time),
  act(c, out) {
    c.a.fledT = c.time;
    if (pushFlight(out, c.a, c.st, c.targets, c.a.fledId, c.dt, c.sq, c.time)) c.speed = 'sprint';
    else c.posture = 'crouched';
    c.mode = 'fleeing';
  },
};
