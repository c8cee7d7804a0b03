import { fireNow, pushManoeuvre, shooterFree } from '../conduct.js';
import { EV, remember } from '../memory.js';
import { combatPosture, inFireRange, pushEngage } from '../reactive/combat.js';
import type { Behaviour, TickCtx } from './context.js';

/** What every engagement does after its intents: the time a player was engaged, the memory of the fight. */
function engaged(c: TickCtx): void {
  const threat = c.p.threat!;
  if (threat.kind === 'player') c.a.engagedPlayerT = c.time;
  if (c.wasMode !== 'engaging') remember(c.a, EV.engaged, c.time, threat.id);
}

/** Purely reactive: turn, aim and fire whenever the threat is in range. */
export const engageReactive: Behaviour = {
  name: 'engage',
  when: { human: false },
  applies: (c) => c.p.threat !== null,
  act(c, out) {
    const threat = c.p.threat!;
    pushEngage(out, c.st, threat, inFireRange(c.p.threatDist));
    c.posture = combatPosture(c.p.threatDist);
    c.mode = 'engaging';
    engaged(c);
  },
};

/**
 * A fight like a person's: the first shot after an acquisition delay, bursts and reloads, at
 * most MAX_SHOOTERS_PER_TARGET of a squad on one target, repositioning by style (the callout
 * to the squad is an overlay).
 */
export const engage: Behaviour = {
  name: 'engage',
  when: { human: true },
  applies: (c) => c.p.threat !== null,
  act(c, out) {
    const { a, time, sq } = c;
    const threat = c.p.threat!;
    const dist = c.p.threatDist;
    // fireNow also starts the engagement clock, so it runs whatever the range.
    let fire = fireNow(a, threat, dist, time, c.st.ammo, c.p.damage > 0) && inFireRange(dist);
    if (fire && sq !== null && !shooterFree(sq.members, a, threat.id, time)) fire = false;
    if (fire) {
      a.fireT = time;
      a.fireTarget = threat.id;
    }
    pushEngage(out, c.st, threat, fire);
    c.posture = combatPosture(dist);
    c.mode = 'engaging';
    if (pushManoeuvre(out, a, c.st.pos, c.s.poi, threat, dist, time)) c.speed = 'jog';
    engaged(c);
  },
};
