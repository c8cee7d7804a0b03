import { isObj, MAX_QUOTED_CHARS, quotedText, quotedValue, type Obj } from './json.js';
import { checkFlags } from './flags.js';
import { ECONOMIES, POLICY_KEYS, TRAIT_NAMES, type ConfigBundle, type PolicyKey, type Problem } from './types.js';

/**
 * The one bundle validator: the sidecar uses it on a bundle directory, the control plane on
 * every publish, `brainstem bundle validate` on the command line. It reports every problem,
 * not the first, each with the path of the field.
 */

export const BUNDLE_LIMITS = {
  maxThemes: 256,
  maxText: 2000,
  maxSessionMin: 7 * 24 * 60,
  maxSpeechLimit: 1_000_000,
  maxVarietyTarget: 1_000_000,
  /**
   * The wire type of `version` is unsigned 64-bit, but a JSON number is exact only up to
   * 2^53 − 1; above it two versions could read as one, so a larger one is refused (422).
   */
  maxVersion: Number.MAX_SAFE_INTEGER,
} as const;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return typeof v;
}

/** Edit distance, for "did you mean" on misspelled keys. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** Problems past this many get no "did you mean": an error answer shows the first 50 details. */
const SUGGESTED_PROBLEMS = 50;

function suggest(key: string, known: readonly string[]): string {
  // No known key is this long, so none is within the distance that earns a suggestion; and the
  // distance of a key of megabytes to each known key would hold the event loop for seconds.
  if (key.length > MAX_QUOTED_CHARS) return '';
  let best = '';
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(key.toLowerCase(), k);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return bestD <= Math.max(2, Math.floor(key.length / 3)) ? ` (did you mean "${best}"?)` : '';
}

class Checker {
  readonly problems: Problem[] = [];

  add(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  object(v: unknown, path: string, known: readonly string[]): Obj | null {
    if (!isObj(v)) {
      this.add(path, `must be an object, got ${typeName(v)}`);
      return null;
    }
    for (const key of Object.keys(v)) {
      if (known.includes(key)) continue;
      // Suggestions only for the problems an answer shows (the first 50): each costs an edit distance per known key.
      const hint = this.problems.length < SUGGESTED_PROBLEMS ? suggest(key, known) : '';
      this.add(path ? `${path}.${quotedText(key)}` : quotedText(key), `is not a known field${hint}`);
    }
    return v;
  }

  require(o: Obj, key: string, path: string): unknown {
    if (!(key in o)) this.add(path, 'is required');
    return o[key];
  }

  number(v: unknown, path: string, min: number, max: number, integer = false): number | null {
    if (v === undefined) return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      this.add(path, `must be a finite number, got ${typeName(v)}`);
      return null;
    }
    if (integer && !Number.isInteger(v)) {
      this.add(path, `must be an integer, got ${v}`);
      return null;
    }
    if (v < min || v > max) {
      this.add(path, `must be between ${min} and ${max}, got ${v}`);
      return null;
    }
    return v;
  }

  boolean(v: unknown, path: string): void {
    if (v !== undefined && typeof v !== 'boolean') this.add(path, `must be a boolean, got ${typeName(v)}`);
  }

  string(v: unknown, path: string, maxLength: number, nonEmpty = false): void {
    if (v === undefined) return;
    if (typeof v !== 'string') this.add(path, `must be a string, got ${typeName(v)}`);
    else if (v.length > maxLength) this.add(path, `must be at most ${maxLength} characters, got ${v.length}`);
    else if (nonEmpty && v.trim() === '') this.add(path, 'must not be empty');
  }
}

const TOP_KEYS = ['version', 'policy', 'game', 'flavor', 'population', 'speech', 'flags'] as const;
/** Top-level fields a bundle may leave out. */
const OPTIONAL_KEYS: readonly string[] = ['flags'];
const GAME_KEYS = ['name', 'premise', 'goal'] as const;
const FLAVOR_KEYS = ['enabled', 'global', 'themes', 'themes_per_bot', 'seed'] as const;
const THEME_KEYS = ['text', 'weight'] as const;
const POPULATION_KEYS = [...TRAIT_NAMES, 'session_min'] as const;
const RANGE_KEYS = ['mean', 'spread'] as const;
const SPEECH_KEYS = ['limits', 'phrase_cache'] as const;
const LIMIT_KEYS = ['per_5min', 'per_hour', 'per_day', 'economy'] as const;
const CACHE_KEYS = ['variety_target', 'max_reuse', 'allow_player_names'] as const;

export type BundleCheck = { ok: true; bundle: ConfigBundle } | { ok: false; problems: Problem[] };

/** Validates a whole ConfigBundle; on success the value is returned typed (not copied). */
export function validateBundle(value: unknown): BundleCheck {
  const c = new Checker();
  const top = c.object(value, '', TOP_KEYS);
  if (!top) return { ok: false, problems: c.problems };
  for (const key of TOP_KEYS) if (!OPTIONAL_KEYS.includes(key)) c.require(top, key, key);

  c.number(top.version, 'version', 0, BUNDLE_LIMITS.maxVersion, true);

  if (top.policy !== undefined) {
    const policy = c.object(top.policy, 'policy', POLICY_KEYS);
    if (policy) for (const key of POLICY_KEYS) c.boolean(policy[key], `policy.${key}`);
  }

  if (top.game !== undefined && top.game !== null) {
    const game = c.object(top.game, 'game', GAME_KEYS);
    if (game) {
      for (const key of GAME_KEYS) {
        c.require(game, key, `game.${key}`);
        c.string(game[key], `game.${key}`, BUNDLE_LIMITS.maxText);
      }
    }
  }

  if (top.flavor !== undefined) {
    const flavor = c.object(top.flavor, 'flavor', FLAVOR_KEYS);
    if (flavor) {
      for (const key of FLAVOR_KEYS) c.require(flavor, key, `flavor.${key}`);
      c.boolean(flavor.enabled, 'flavor.enabled');
      c.string(flavor.global, 'flavor.global', BUNDLE_LIMITS.maxText);
      let themeCount: number | null = null;
      if (flavor.themes !== undefined) {
        if (!Array.isArray(flavor.themes)) c.add('flavor.themes', `must be an array, got ${typeName(flavor.themes)}`);
        else if (flavor.themes.length > BUNDLE_LIMITS.maxThemes)
          c.add('flavor.themes', `must have at most ${BUNDLE_LIMITS.maxThemes} themes, got ${flavor.themes.length}`);
        else {
          themeCount = flavor.themes.length;
          flavor.themes.forEach((t, i) => {
            const p = `flavor.themes[${i}]`;
            const theme = c.object(t, p, THEME_KEYS);
            if (!theme) return;
            c.require(theme, 'text', `${p}.text`);
            c.require(theme, 'weight', `${p}.weight`);
            c.string(theme.text, `${p}.text`, BUNDLE_LIMITS.maxText, true);
            const w = c.number(theme.weight, `${p}.weight`, 0, 1e6);
            if (w === 0) c.add(`${p}.weight`, 'must be greater than 0');
          });
        }
      }
      const perBot = c.number(flavor.themes_per_bot, 'flavor.themes_per_bot', 0, BUNDLE_LIMITS.maxThemes, true);
      if (perBot !== null && themeCount !== null && perBot > themeCount) {
        c.add('flavor.themes_per_bot', `must not exceed the number of themes (${themeCount}), got ${perBot}`);
      }
      c.number(flavor.seed, 'flavor.seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
    }
  }

  if (top.population !== undefined) {
    const pop = c.object(top.population, 'population', POPULATION_KEYS);
    if (pop) {
      for (const trait of TRAIT_NAMES) {
        const p = `population.${trait}`;
        if (c.require(pop, trait, p) === undefined) continue;
        const range = c.object(pop[trait], p, RANGE_KEYS);
        if (!range) continue;
        c.require(range, 'mean', `${p}.mean`);
        c.require(range, 'spread', `${p}.spread`);
        c.number(range.mean, `${p}.mean`, 0, 1);
        c.number(range.spread, `${p}.spread`, 0, 1);
      }
      const session = c.require(pop, 'session_min', 'population.session_min');
      if (session !== undefined) {
        if (!Array.isArray(session) || session.length !== 2) {
          c.add('population.session_min', 'must be an array of two numbers [min, max] in minutes');
        } else {
          const lo = c.number(session[0], 'population.session_min[0]', 0, BUNDLE_LIMITS.maxSessionMin);
          const hi = c.number(session[1], 'population.session_min[1]', 0, BUNDLE_LIMITS.maxSessionMin);
          if (lo === 0) c.add('population.session_min[0]', 'must be greater than 0');
          if (lo !== null && hi !== null && lo > hi) c.add('population.session_min', `min (${lo}) must not exceed max (${hi})`);
        }
      }
    }
  }

  if (top.speech !== undefined) {
    const speech = c.object(top.speech, 'speech', SPEECH_KEYS);
    if (speech) {
      c.require(speech, 'limits', 'speech.limits');
      c.require(speech, 'phrase_cache', 'speech.phrase_cache');
      if (speech.limits !== undefined) {
        const limits = c.object(speech.limits, 'speech.limits', LIMIT_KEYS);
        if (limits) {
          for (const key of LIMIT_KEYS) c.require(limits, key, `speech.limits.${key}`);
          for (const key of ['per_5min', 'per_hour', 'per_day'] as const) {
            const v = limits[key];
            if (typeof v === 'number' && v < 0) c.add(`speech.limits.${key}`, `must not be negative, got ${v}`);
            else c.number(v, `speech.limits.${key}`, 0, BUNDLE_LIMITS.maxSpeechLimit, true);
          }
          if (limits.economy !== undefined && !ECONOMIES.includes(limits.economy as never)) {
            c.add('speech.limits.economy', `must be one of ${ECONOMIES.join(', ')}, got ${quotedValue(limits.economy)}`);
          }
        }
      }
      if (speech.phrase_cache !== undefined) {
        const cache = c.object(speech.phrase_cache, 'speech.phrase_cache', CACHE_KEYS);
        if (cache) {
          for (const key of CACHE_KEYS) c.require(cache, key, `speech.phrase_cache.${key}`);
          c.number(cache.variety_target, 'speech.phrase_cache.variety_target', 0, BUNDLE_LIMITS.maxVarietyTarget, true);
          c.number(cache.max_reuse, 'speech.phrase_cache.max_reuse', 0, 1e6);
          c.boolean(cache.allow_player_names, 'speech.phrase_cache.allow_player_names');
        }
      }
    }
  }

  if (top.flags !== undefined) checkFlags(top.flags, (path, message) => c.add(path, message));

  return c.problems.length === 0 ? { ok: true, bundle: value as ConfigBundle } : { ok: false, problems: c.problems };
}

/** Whether a subsystem is on: any omitted policy key means on. */
export function policyOn(bundle: Pick<ConfigBundle, 'policy'>, key: PolicyKey): boolean {
  return bundle.policy[key] !== false;
}

/** The documented defaults; `bundles/default/bundle.json` holds the same values. */
export const DEFAULT_BUNDLE: ConfigBundle = {
  version: 1,
  policy: Object.fromEntries(POLICY_KEYS.map((k) => [k, true])) as ConfigBundle['policy'],
  game: null,
  flavor: {
    enabled: true,
    global: 'The power went out weeks ago; people are wary but not hopeless.',
    themes: [
      { text: 'misses their family', weight: 3 },
      { text: 'distrusts the military', weight: 2 },
      { text: 'collects old maps', weight: 1 },
      { text: 'hums old songs when nervous', weight: 1 },
      { text: 'was a nurse before', weight: 1 },
    ],
    themes_per_bot: 2,
    seed: 1337,
  },
  population: {
    openness: { mean: 0.5, spread: 0.2 },
    conscientiousness: { mean: 0.5, spread: 0.2 },
    extraversion: { mean: 0.5, spread: 0.2 },
    agreeableness: { mean: 0.5, spread: 0.2 },
    neuroticism: { mean: 0.4, spread: 0.2 },
    afk_proneness: { mean: 0.2, spread: 0.1 },
    break_proneness: { mean: 0.2, spread: 0.1 },
    fatigue_rate: { mean: 0.3, spread: 0.1 },
    session_min: [45, 180],
  },
  speech: {
    limits: { per_5min: 3, per_hour: 20, per_day: 120, economy: 'Normal' },
    phrase_cache: { variety_target: 200, max_reuse: 5, allow_player_names: false },
  },
};
