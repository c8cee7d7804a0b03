import type { Intent, Why } from '../types.js';
import type { TickCtx } from './context.js';
import type { WhyRecorder } from './why.js';
import { away, goAway } from './away.js';
import { dead } from './dead.js';
import { engage, engageReactive } from './engage.js';
import { flee, fleeReactive } from './flee.js';
import { flightGoesOnBehaviour } from './flight.js';
import { goalHuman, goalPlain, idle } from './goals.js';
import { investigate, investigateReactive } from './investigate.js';
import { logoff } from './logoff.js';
import { acknowledge, ambient, callout, combatEmote, fatigue, heedCallout, look, plainEmote, watchContact } from './overlays.js';
import { patrol, patrolGoals, patrolReactive, patrolReactiveGoals } from './patrol.js';
import {
  followLeaderHuman,
  followLeaderPlain,
  leaderWaitsHuman,
  leaderWaitsPlain,
  regroupGoals,
  regroupHuman,
  regroupHumanGoals,
  regroupPlain,
} from './squad.js';
import { windDown } from './wind-down.js';
import { BEHAVIOURS, OVERLAYS } from './table.js';

/**
 * The table's dispatch: BEHAVIOURS[k] and OVERLAYS[k] by their index k, each case calling its
 * behaviour directly. A loop calling `table[i].applies(c)` would make one call site serve every
 * behaviour, which V8 cannot inline; a case per behaviour keeps each call monomorphic. The
 * order and the policy sets stay the table's (table.ts); this only maps an index to its entry,
 * and test/brain/behaviours.test.ts checks every case calls the entry at its index.
 */

/** Runs the decision of the table `ids` (indexes into BEHAVIOURS, in order); returns the index of the one that decided. */
export function decide(c: TickCtx, out: Intent[], ids: Uint8Array): number {
  for (let i = 0; i < ids.length; i++) {
    const k = ids[i]!;
    switch (k) {
      case 0:
        if (dead.applies(c)) {
          dead.act(c, out);
          return k;
        }
        break;
      case 1:
        if (logoff.applies(c)) {
          logoff.act(c, out);
          return k;
        }
        break;
      case 2:
        if (away.applies(c)) {
          away.act(c, out);
          return k;
        }
        break;
      case 3:
        if (fleeReactive.applies(c)) {
          fleeReactive.act(c, out);
          return k;
        }
        break;
      case 4:
        if (flee.applies(c)) {
          flee.act(c, out);
          return k;
        }
        break;
      case 5:
        if (engageReactive.applies(c)) {
          engageReactive.act(c, out);
          return k;
        }
        break;
      case 6:
        if (engage.applies(c)) {
          engage.act(c, out);
          return k;
        }
        break;
      case 7:
        if (flightGoesOnBehaviour.applies(c)) {
          flightGoesOnBehaviour.act(c, out);
          return k;
        }
        break;
      case 8:
        if (investigateReactive.applies(c)) {
          investigateReactive.act(c, out);
          return k;
        }
        break;
      case 9:
        if (investigate.applies(c)) {
          investigate.act(c, out);
          return k;
        }
        break;
      case 10:
        if (windDown.applies(c)) {
          windDown.act(c, out);
          return k;
        }
        break;
      case 11:
        if (goAway.applies(c)) {
          goAway.act(c, out);
          return k;
        }
        break;
      case 12:
        if (followLeaderHuman.applies(c)) {
          followLeaderHuman.act(c, out);
          return k;
        }
        break;
      case 13:
        if (followLeaderPlain.applies(c)) {
          followLeaderPlain.act(c, out);
          return k;
        }
        break;
      case 14:
        if (leaderWaitsHuman.applies(c)) {
          leaderWaitsHuman.act(c, out);
          return k;
        }
        break;
      case 15:
        if (leaderWaitsPlain.applies(c)) {
          leaderWaitsPlain.act(c, out);
          return k;
        }
        break;
      case 16:
        if (patrolReactive.applies(c)) {
          patrolReactive.act(c, out);
          return k;
        }
        break;
      case 17:
        if (patrolReactiveGoals.applies(c)) {
          patrolReactiveGoals.act(c, out);
          return k;
        }
        break;
      case 18:
        if (patrol.applies(c)) {
          patrol.act(c, out);
          return k;
        }
        break;
      case 19:
        if (patrolGoals.applies(c)) {
          patrolGoals.act(c, out);
          return k;
        }
        break;
      case 20:
        if (regroupHumanGoals.applies(c)) {
          regroupHumanGoals.act(c, out);
          return k;
        }
        break;
      case 21:
        if (regroupHuman.applies(c)) {
          regroupHuman.act(c, out);
          return k;
        }
        break;
      case 22:
        if (regroupGoals.applies(c)) {
          regroupGoals.act(c, out);
          return k;
        }
        break;
      case 23:
        if (regroupPlain.applies(c)) {
          regroupPlain.act(c, out);
          return k;
        }
        break;
      case 24:
        if (goalHuman.applies(c)) {
          goalHuman.act(c, out);
          return k;
        }
        break;
      case 25:
        if (goalPlain.applies(c)) {
          goalPlain.act(c, out);
          return k;
        }
        break;
      case 26:
        if (idle.applies(c)) {
          idle.act(c, out);
          return k;
        }
        break;
    }
  }
  return -1;
}

/** Runs every overlay of `ids` (indexes into OVERLAYS, in order) that applies. */
export function overlay(c: TickCtx, out: Intent[], ids: Uint8Array): void {
  for (let i = 0; i < ids.length; i++) {
    switch (ids[i]!) {
      case 0:
        if (callout.applies(c)) callout.act(c, out);
        break;
      case 1:
        if (heedCallout.applies(c)) heedCallout.act(c, out);
        break;
      case 2:
        if (watchContact.applies(c)) watchContact.act(c, out);
        break;
      case 3:
        if (look.applies(c)) look.act(c, out);
        break;
      case 4:
        if (acknowledge.applies(c)) acknowledge.act(c, out);
        break;
      case 5:
        if (ambient.applies(c)) ambient.act(c, out);
        break;
      case 6:
        if (combatEmote.applies(c)) combatEmote.act(c, out);
        break;
      case 7:
        if (plainEmote.applies(c)) plainEmote.act(c, out);
        break;
      case 8:
        if (fatigue.applies(c)) fatigue.act(c, out);
        break;
    }
  }
}

/** One overlay index each, so the overlays of an explained tick run one at a time through overlay() above. */
const SINGLE = OVERLAYS.map((_, k) => Uint8Array.of(k));

/**
 * overlay() for a tick that asked for its explanation: the same cases, one overlay at a time, so
 * each one that adds an intent is named in the rule after the deciding behaviour (`decided`, as
 * decide() returned it). A tick that does not ask never comes here.
 */
export function overlayExplained(c: TickCtx, out: Intent[], ids: Uint8Array, decided: number): string {
  let rule = decided < 0 ? 'none' : BEHAVIOURS[decided]!.name;
  for (let i = 0; i < ids.length; i++) {
    const k = ids[i]!;
    const before = out.length;
    overlay(c, out, SINGLE[k]!);
    if (out.length > before) rule += ` + ${OVERLAYS[k]!.name}`;
  }
  return rule;
}

/** The explanation of a decided tick: mode and goal as the decision left them, the options it weighed, the rule. */
export function explanation(c: TickCtx, why: WhyRecorder, rule: string): Why {
  return { mode: c.mode, goal: c.a.goal, options: why.top(), rule };
}
