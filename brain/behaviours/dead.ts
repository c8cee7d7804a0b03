import type { Behaviour } from './context.js';

/** The dead lie prone and idle; mourned once, on dying (the dead do not rejoin a squad). */
export const dead: Behaviour = {
  name: 'dead',
  when: {},
  applies: (c) => c.st.health <= 0,
  act(c, out) {
    if (c.a.squad !== '') c.squads.mourn(c.a);
    out.push({ kind: 'Idle', reason: 'dead' });
    c.posture = 'prone';
    c.mode = 'dead';
  },
};
