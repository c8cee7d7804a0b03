import { DEFAULT_BUNDLE, POLICY_KEYS, validateBundle, type ConfigBundle } from '../../brain/index.js';

/**
 * `bench tick --policy`: which bundle policies the brain under test runs with. `all` is every
 * subsystem on (what the default bundle does), `none` the purely reactive brain, `compare`
 * both in the same run (issue #3's target: all ≥ 60% of none).
 */
export const TICK_POLICIES = ['all', 'none', 'compare'] as const;
export type TickPolicy = (typeof TICK_POLICIES)[number];
/** What one server runs with; `default` is the built-in bundle as the sidecar would load it. */
export type BrainPolicy = 'default' | 'all' | 'none';

export function parseTickPolicy(value: string): TickPolicy {
  const v = TICK_POLICIES.find((p) => p === value);
  if (v === undefined) throw new Error(`--policy must be one of ${TICK_POLICIES.join(', ')}, got "${value}"`);
  return v;
}

export function parseBrainPolicy(value: string | undefined): BrainPolicy {
  if (value === undefined || value === 'default' || value === 'all' || value === 'none') return value ?? 'default';
  throw new Error(`unknown brain policy "${value}" (default, all, none)`);
}

/** The default bundle with every policy key set on (`all`) or off (`none`); the default bundle itself for `default`. */
export function policyBundle(policy: BrainPolicy): ConfigBundle {
  if (policy === 'default') return DEFAULT_BUNDLE;
  const b = structuredClone(DEFAULT_BUNDLE);
  b.policy = Object.fromEntries(POLICY_KEYS.map((k) => [k, policy === 'all'])) as ConfigBundle['policy'];
  const check = validateBundle(b);
  if (!check.ok) throw new Error(`policy bundle invalid: ${JSON.stringify(check)}`);
  return b;
}
