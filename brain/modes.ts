/** The named states a character is in: what it is doing, and what it is after. Their spellings are part of the persisted state. */

/** What the roster shows a character doing. */
export const MODES = [
  'idle',
  'patrolling',
  'engaging',
  'fleeing',
  'investigating',
  'traveling',
  'roaming',
  'guarding',
  'regrouping',
  'afk',
  'on_break',
  'logged_off',
  'dead',
] as const;
export type Mode = (typeof MODES)[number];

export const GOALS = ['none', 'find_water', 'find_food', 'find_medical', 'loot', 'guard', 'roam', 'regroup'] as const;
export type Goal = (typeof GOALS)[number];
