import { ambientEmote, ANSWER_GAP_S, friendNear, hear, heatEmote, pushLook, TURN_HOLD_S } from '../conduct.js';
import { yawTo } from '../geometry.js';
import { noise } from '../prng.js';
import { heedDelay } from '../squads.js';
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

/** The member who notices a hostile first calls it out to the squad (`point`), fighting or running. */
export const callout: Behaviour = {
  name: 'callout',
  when: { human: true, emotes: true },
  applies(c) {
    const { a, sq } = c;
    return (
      sq !== null &&
      sq.calloutBy === a.id &&
      sq.calloutT === c.time &&
      !c.first &&
      (c.mode === 'engaging' || c.mode === 'fleeing') &&
      c.time - a.lastEmoteT >= EMOTE_GAP_S
    );
  },
  act(c, out) {
    c.a.lastEmoteT = c.time;
    emote(c, out, 'point');
  },
};

/**
 * A squadmate hears a callout after its own delay (heedDelay: 0.3-2 s); one that cannot see
 * what was called out then turns toward the caller, as it takes the contact up.
 */
export const heedCallout: Behaviour = {
  name: 'heed_callout',
  when: { human: true },
  applies(c) {
    const { a, sq } = c;
    if (sq === null || c.p.threat !== null || sq.calloutBy === a.id || !calm(c)) return false;
    const heard = c.time - sq.calloutT - heedDelay(a, sq.calloutT);
    return heard >= 0 && heard < TURN_HOLD_S;
  },
  act(c) {
    const { a, sq } = c;
    const pos = c.st.pos;
    a.faceYaw = yawTo(pos.x, pos.z, sq!.calloutX, sq!.calloutZ);
    a.faceUntil = sq!.calloutT + heedDelay(a, sq!.calloutT) + TURN_HOLD_S;
  },
};

/**
 * A hostile of its own that just went out of sight: the character keeps looking where it was
 * for a moment, whether or not it goes to look (a look, not a walk, when it is too far).
 */
export const watchContact: Behaviour = {
  name: 'watch_contact',
  when: { human: true },
  applies: (c) => c.p.threat === null && c.a.contact && !c.a.contactShared && c.time - c.a.contactT < TURN_HOLD_S && calm(c),
  act(c) {
    const a = c.a;
    a.faceYaw = yawTo(c.st.pos.x, c.st.pos.z, a.contactX, a.contactZ);
    a.faceUntil = a.contactT + TURN_HOLD_S;
  },
};

/** Taking up a squadmate's callout, a character acknowledges it: a nod, a raised hand, or pointing the same way. */
export const acknowledge: Behaviour = {
  name: 'acknowledge',
  when: { human: true, emotes: true },
  applies: (c) => c.adopted && c.mode !== 'dead' && c.mode !== 'logged_off' && !c.away && c.time - c.a.lastEmoteT >= EMOTE_GAP_S,
  act(c, out) {
    c.a.lastEmoteT = c.time;
    const pick = noise(c.a.id + 10, c.time);
    emote(c, out, pick < 0.4 ? 'nod' : pick < 0.7 ? 'wave' : 'point');
  },
};

/** Calm characters look around now and then, and turn to a known speaker they hear. */
export const look: Behaviour = {
  name: 'look',
  when: { human: true },
  applies: calm,
  act(c, out) {
    c.heard = hear(c.a, c.s.heard, c.targets, c.st.pos, c.time);
    pushLook(out, c.a, c.st.heading_deg, c.time);
  },
};

/** Calm characters emote a few times an hour: greetings to a friend near, a nod to a speaker. */
export const ambient: Behaviour = {
  name: 'ambient_emote',
  when: { human: true, emotes: true },
  applies: calm,
  act(c, out) {
    // Not due yet (most ticks): ambientEmote would say null, so the targets are not scanned for a friend.
    if (c.time < c.a.nextEmoteT && !(c.heard && c.time - c.a.lastEmoteT >= ANSWER_GAP_S)) return;
    emote(c, out, ambientEmote(c.a, c.time, c.p.friendly !== null || friendNear(c.st.pos, c.targets, FRIENDLY_RANGE_M), c.heard));
  },
};

/** Emotes of a fight or a flight as emotions drive them (emotional events on): panic, a wave for help, a taunt, a point. */
export const combatEmote: Behaviour = {
  name: 'combat_emote',
  when: { human: true, emotes: true },
  applies: (c) => c.sw.emotions && (c.mode === 'engaging' || c.mode === 'fleeing'),
  act(c, out) {
    emote(c, out, heatEmote(c.a, c.time, c.mode === 'fleeing', c.mode === 'engaging', EMOTE_GAP_S));
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
