import { windingDown } from '../conduct.js';
import type { Behaviour } from './context.js';

/** The last seconds of a session: stop and crouch, as a player about to leave does. */
export const windDown: Behaviour = {
  name: 'wind_down',
  when: { human: true },
  applies: (c) => c.p.threat === null && windingDown(c.a, c.time),
  act(c, out) {
    out.push({ kind: 'Idle', reason: 'winding_down' });
    c.posture = 'crouched';
    c.mode = 'idle';
  },
};
