import type { Flags } from './flag-eval.js';

/**
 * The ConfigBundle as the page edits it, and a client-side mirror of the server's validator
 * (brain/bundle.ts `validateBundle`) for the fields the form can produce. The server stays the
 * authority: its 422 `details` are shown at the same paths.
 */

export const POLICY_KEYS = [
  'llm_dialogue',
  'voice_in',
  'voice_out',
  'emotes',
  'phrase_cache',
  'flavor',
  'human_factors',
  'emotional_events',
  'game_knowledge',
  'global_goals',
  'squads',
  'memory',
] as const;
export type PolicyKey = (typeof POLICY_KEYS)[number];

export const TRAIT_NAMES = [
  'openness',
  'conscientiousness',
  'extraversion',
  'agreeableness',
  'neuroticism',
  'afk_proneness',
  'break_proneness',
  'fatigue_rate',
] as const;
export type TraitName = (typeof TRAIT_NAMES)[number];

export const ECONOMIES = ['Silent', 'Frugal', 'Normal', 'Chatty'] as const;

export const LIMITS = {
  maxThemes: 256,
  maxText: 2000,
  maxSessionMin: 7 * 24 * 60,
  maxSpeechLimit: 1_000_000,
  maxVarietyTarget: 1_000_000,
  maxVersion: Number.MAX_SAFE_INTEGER,
} as const;

export interface ConfigBundle {
  version: number;
  policy: Partial<Record<PolicyKey, boolean>>;
  game: { name: string; premise: string; goal: string } | null;
  flavor: { enabled: boolean; global: string; themes: { text: string; weight: number }[]; themes_per_bot: number; seed: number };
  population: Record<TraitName, { mean: number; spread: number }> & { session_min: [number, number] };
  speech: {
    limits: { per_5min: number; per_hour: number; per_day: number; economy: (typeof ECONOMIES)[number] };
    phrase_cache: { variety_target: number; max_reuse: number; allow_player_names: boolean };
  };
  /** Game flags (see flags.ts); optional. */
  flags?: Flags;
}

export function validate(b: ConfigBundle): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (path: string, message: string) => {
    out[path] ??= message;
  };
  const num = (v: number, path: string, min: number, max: number, integer = false) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return add(path, 'Enter a number.');
    if (integer && !Number.isInteger(v)) return add(path, 'Must be a whole number.');
    if (v < min || v > max) return add(path, `Must be between ${min} and ${max}.`);
    return undefined;
  };
  const text = (v: string, path: string, nonEmpty = false) => {
    if (v.length > LIMITS.maxText) add(path, `At most ${LIMITS.maxText} characters (now ${v.length}).`);
    else if (nonEmpty && v.trim() === '') add(path, 'Must not be empty.');
  };

  if (b.game) for (const k of ['name', 'premise', 'goal'] as const) text(b.game[k], `game.${k}`);

  text(b.flavor.global, 'flavor.global');
  if (b.flavor.themes.length > LIMITS.maxThemes) add('flavor.themes', `At most ${LIMITS.maxThemes} themes.`);
  b.flavor.themes.forEach((t, i) => {
    text(t.text, `flavor.themes[${i}].text`, true);
    num(t.weight, `flavor.themes[${i}].weight`, 0, 1e6);
    if (t.weight === 0) add(`flavor.themes[${i}].weight`, 'Must be greater than 0.');
  });
  num(b.flavor.themes_per_bot, 'flavor.themes_per_bot', 0, LIMITS.maxThemes, true);
  if (Number.isInteger(b.flavor.themes_per_bot) && b.flavor.themes_per_bot > b.flavor.themes.length) {
    add('flavor.themes_per_bot', `Must not exceed the number of themes (${b.flavor.themes.length}).`);
  }
  num(b.flavor.seed, 'flavor.seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);

  for (const t of TRAIT_NAMES) {
    num(b.population[t].mean, `population.${t}.mean`, 0, 1);
    num(b.population[t].spread, `population.${t}.spread`, 0, 1);
  }
  const [lo, hi] = b.population.session_min;
  num(lo, 'population.session_min[0]', 0, LIMITS.maxSessionMin);
  num(hi, 'population.session_min[1]', 0, LIMITS.maxSessionMin);
  if (lo === 0) add('population.session_min[0]', 'Must be greater than 0.');
  if (Number.isFinite(lo) && Number.isFinite(hi) && lo > hi) add('population.session_min', `Min (${lo}) must not exceed max (${hi}).`);

  for (const k of ['per_5min', 'per_hour', 'per_day'] as const) num(b.speech.limits[k], `speech.limits.${k}`, 0, LIMITS.maxSpeechLimit, true);
  num(b.speech.phrase_cache.variety_target, 'speech.phrase_cache.variety_target', 0, LIMITS.maxVarietyTarget, true);
  num(b.speech.phrase_cache.max_reuse, 'speech.phrase_cache.max_reuse', 0, 1e6);
  return out;
}
