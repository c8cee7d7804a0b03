import { detour } from '../conduct.js';
import { goalSpeed, modeForGoal, plan, pushGoal, urgent } from '../goals.js';
import { tiredSpeed } from '../human-factors.js';
import { EV, remember } from '../memory.js';
import type { Behaviour } from './context.js';

/** Chooses (and keeps) a goal from needs, the game's framing and the character, and goes after it. */
function pursue(human: boolean): Behaviour {
  return {
    name: 'goal',
    when: { goals: true, human },
    applies: () => true,
    act(c, out) {
      const { a, st, time } = c;
      if (a.goal === 'regroup') a.goalT = -1e9;
      if (plan(a, st, c.s.poi, time, c.sw.framing, c.sw.knowledge, human ? a.fatigue : 0, c.why)) {
        c.counters.bump('plan');
        remember(a, EV.plan, time, 0);
      }
      const want = goalSpeed(a, urgent(st));
      const pace = human ? tiredSpeed(a, want) : want;
      const how = human && a.goalHas ? detour(out, a, st.pos, a.goalX, a.goalZ, pace, time, c.wasMode === modeForGoal(a.goal)) : null;
      if (how === 'give_up') {
        // Unreachable from here: drop it and choose again next tick.
        a.goalHas = false;
        a.goalT = -1e9;
      }
      c.speed = how === 'detour' ? pace : pushGoal(out, a, st.pos, pace);
      c.mode = c.speed === null ? (a.goal === 'guard' ? 'guarding' : 'idle') : modeForGoal(a.goal);
    },
  };
}

export const goalHuman = pursue(true);
export const goalPlain = pursue(false);

/** Nothing to do and no goals to choose: stand idle. */
export const idle: Behaviour = {
  name: 'idle',
  when: { goals: false },
  applies: () => true,
  act(c, out) {
    out.push({ kind: 'Idle', reason: 'none' });
    c.mode = 'idle';
  },
};
