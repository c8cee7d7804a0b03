import { contactMemoryS, INVESTIGATE_MAX_S, MAX_INVESTIGATORS, NO_RETURN_S, pushSearch, SEEK_BRAVERY } from '../conduct.js';
import { distH } from '../geometry.js';
import { cowardly } from '../population.js';
import { CONTACT_MEMORY_S, hasRecentContact, pushInvestigate } from '../reactive/investigate.js';
import type { Behaviour, TickCtx } from './context.js';

/** Who goes to look: the wounded always; others for a contact the squad shared (or, brave enough, their own), never a coward. */
function willing(c: TickCtx, seekOwn: boolean): boolean {
  const a = c.a;
  return c.p.wounded || ((a.contactShared || (seekOwn && a.brave >= SEEK_BRAVERY)) && a.cowardFlag !== 1 && !cowardly(a));
}

/**
 * Whether this contact is not to be investigated now: within NO_RETURN_S of a flight, one
 * remembered too briefly for how far it was, or one MAX_INVESTIGATORS squadmates already search.
 */
function barred(c: TickCtx): boolean {
  const { a, time, sq } = c;
  const pos = c.st.pos;
  if (time - a.fledT < NO_RETURN_S) return true;
  if (c.wasMode === 'investigating') return time - a.invT > INVESTIGATE_MAX_S;
  if (time - a.contactT >= contactMemoryS(CONTACT_MEMORY_S, distH(pos.x, pos.z, a.contactX, a.contactZ))) return true;
  if (sq === null || !a.contactShared) return false;
  let n = 0;
  for (const m of sq.members.values()) if (m !== a && m.mode === 'investigating' && m.contactId === a.contactId && ++n >= MAX_INVESTIGATORS) return true;
  return false;
}

/** Purely reactive: walk crouched to a contact lost from sight, until it is stale or reached. */
export const investigateReactive: Behaviour = {
  name: 'investigate',
  when: { human: false },
  applies: (c) => hasRecentContact(c.a, c.st.pos, c.time) && willing(c, false),
  act(c, out) {
    pushInvestigate(out, c.a);
    c.posture = 'crouched';
    c.speed = 'walk';
    c.mode = 'investigating';
  },
};

/** Jog to about CAUTIOUS_M, then crouch; search the spot; give up in time; at most MAX_INVESTIGATORS per contact per squad. */
export const investigate: Behaviour = {
  name: 'investigate',
  when: { human: true },
  applies(c) {
    const a = c.a;
    return a.contact && (c.wasMode === 'investigating' || c.time - a.contactT <= CONTACT_MEMORY_S) && willing(c, true) && !barred(c);
  },
  act(c, out) {
    const pos = c.st.pos;
    const how = pushSearch(out, c.a, pos.x, pos.z, c.time, c.p.wounded);
    if (how === null) {
      out.push({ kind: 'Idle', reason: 'looking_around' });
      c.mode = 'idle';
    } else {
      c.posture = how === 'jog' ? 'standing' : 'crouched';
      c.speed = how === 'search' ? null : how;
      c.mode = 'investigating';
    }
  },
};
