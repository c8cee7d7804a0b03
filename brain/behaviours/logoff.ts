import { sessionOver } from '../human-factors.js';
import { EV, remember } from '../memory.js';
import type { Behaviour } from './context.js';

/** A session that has run out (and nothing hostile in sight) ends in `Logoff`, once and for good. */
export const logoff: Behaviour = {
  name: 'logoff',
  when: { human: true },
  applies: (c) => c.a.loggedOff || (c.p.threat === null && sessionOver(c.a, c.time)),
  act(c, out) {
    const a = c.a;
    if (!a.loggedOff) {
      a.loggedOff = true;
      c.counters.bump('logoff');
      remember(a, EV.logoff, c.time, 0);
      c.squads.leave(a);
      a.squad = '';
    }
    out.push({ kind: 'Logoff' });
    c.mode = 'logged_off';
  },
};
