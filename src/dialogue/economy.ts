import type { Economy } from '../../brain/types.js';

/** What a `speech.limits.economy` setting means for one character. */
export interface EconomyProfile {
  /** Silent never speaks, not even to answer. */
  readonly speaks: boolean;
  /** Least game time between two lines the character volunteers (greetings, idle remarks). */
  readonly volunteerIntervalS: number;
  /**
   * How strongly a cached line is preferred over a new model call when one fits (0–1): the
   * chance of reusing, before the variety adjustment of the phrase cache.
   */
  readonly cachePreference: number;
}

export const ECONOMY_PROFILES: Readonly<Record<Economy, EconomyProfile>> = {
  Silent: { speaks: false, volunteerIntervalS: Infinity, cachePreference: 1 },
  Frugal: { speaks: true, volunteerIntervalS: 240, cachePreference: 0.9 },
  Normal: { speaks: true, volunteerIntervalS: 90, cachePreference: 0.6 },
  Chatty: { speaks: true, volunteerIntervalS: 30, cachePreference: 0.25 },
};
