import { ambientEmote, friendNear, hear, pushLook } from '../conduct.js';
import { EMOTE_GAP_S, pickEmote } from '../emotions.js';
import { updateFatigue } from '../human-factors.js';
import { FRIENDLY_RANGE_M } from '../reactive/perception.js';
import type { Intent } from '../types.js';
import type { Behaviour, TickCtx } from './context.js';

/**
 * What happens on top of the decision, in this order: every overlay whose `applies` holds acts
 * (unlike the decision table, where only the first does).
 */

/** Calm: neither dead, logged off, away, fighting nor fleeing. */
function calm(c: TickCtx): boolean {
  const m = c.mode;
  return m !== 'dead' && m !== 'logged_off' && !c.away && m !== 'engaging' && m !== 'fleeing';
}

function emote(c: TickCtx, out: Intent[], name: string | null): void {
  if (name === null) return;
  out.push({ kind: 'Emote', name });
  c.counters.bump('emote');
}

/** The member who first sees a hostile calls it out to the squad. */
export const callout: Behaviour = {
  name: 'callout',
  when: { human: true, emotes: true },
  applies(c) {
    const a = c.a;
    return c.mode === 'engaging' && c.wasMode !== 'engaging' && !c.first && c.sq !== null && c.time - a.lastEmoteT >= EMOTE_GAP_S && a.social >= 0.4;
  },
  act(c, out) {
    c.a.lastEmoteT = c.time;
    emote(c, out, 'point');
  },
};

/** Calm characters look around now and then, and turn to a known speaker they hear. */
export const look: Behaviour = {
  name: 'look',
  when: { human: true },
  applies: calm,
  act(c, out) {
    c.heard = hear(c.a, c.s, c.time);
    pushLook(out, c.a, c.st.heading_deg, c.time);
  },
};

/** Calm characters emote a few times an hour: greetings to a friend near, a nod to a speaker. */
export const ambient: Behaviour = {
  name: 'ambient_emote',
  when: { human: true, emotes: true },
  applies: calm,
  act(c, out) {
    emote(c, out, ambientEmote(c.a, c.time, c.p.friendly !== null || friendNear(c.s, FRIENDLY_RANGE_M), c.heard));
  },
};

/** Emotes of a fight or a flight (panic, taunt) as emotions drive them. */
export const combatEmote: Behaviour = {
  name: 'combat_emote',
  when: { human: true, emotes: true },
  applies: (c) => c.mode === 'engaging' || c.mode === 'fleeing',
  act(c, out) {
    emote(c, out, pickEmote(c.a, c.p, c.time, c.mode === 'fleeing', c.mode === 'engaging', c.sw.emotions, c.a.social));
  },
};

/** Without human factors, emotes come from emotions and friendly company alone, in any active state. */
export const plainEmote: Behaviour = {
  name: 'emote',
  when: { human: false, emotes: true },
  applies: (c) => c.mode !== 'dead' && c.mode !== 'logged_off' && !c.away,
  act(c, out) {
    emote(c, out, pickEmote(c.a, c.p, c.time, c.mode === 'fleeing', c.mode === 'engaging', c.sw.emotions, c.a.social));
  },
};

/** Fatigue grows with running and falls at rest (it slows every later pace). */
export const fatigue: Behaviour = {
  name: 'fatigue',
  when: { human: true },
  applies: () => true,
  act(c) {
    updateFatigue(c.a, c.speed, c.away, c.dt);
  },
};
