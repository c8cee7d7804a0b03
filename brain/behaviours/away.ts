import { endAway, isAway, maybeGoAway } from '../human-factors.js';
import { EV, remember } from '../memory.js';
import type { Behaviour, TickCtx } from './context.js';
import type { Intent } from '../types.js';

function idleAway(c: TickCtx, out: Intent[]): void {
  out.push({ kind: 'Idle', reason: c.a.afkReason });
  c.away = true;
  c.mode = c.a.afkReason === 'break' ? 'on_break' : 'afk';
}

/** An AFK spell or a break goes on until its end; taking damage ends it at once. */
export const away: Behaviour = {
  name: 'away',
  when: { human: true },
  applies(c) {
    if (!isAway(c.a, c.time)) return false;
    if (c.p.damage > 0) {
      endAway(c.a);
      return false;
    }
    return true;
  },
  act: idleAway,
};

/** Now and then, with nothing else to do, a player steps away (the coin is drawn only here). */
export const goAway: Behaviour = {
  name: 'go_away',
  when: { human: true },
  applies: (c) => maybeGoAway(c.a, c.time, c.dt),
  act(c, out) {
    c.counters.bump('afk');
    remember(c.a, c.a.afkReason === 'break' ? EV.break : EV.afk, c.time, 0);
    idleAway(c, out);
  },
};
