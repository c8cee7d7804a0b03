/** The brain's public surface: what src/ may import. */
export * from './types.js';
export { isObj, type Obj } from './json.js';
export { validateBundle, policyOn, DEFAULT_BUNDLE, BUNDLE_LIMITS, type BundleCheck } from './bundle.js';
export { Brain, type BrainOptions, type Persona } from './brain.js';
export { BrainStateError, STATE_FORMAT, STATE_VERSION, type BrainState } from './state-io.js';
export { COUNTER_KINDS, type CounterKind } from './counters.js';
export type { MemorySummary } from './memory.js';
export { parseTickRequest, type TickParse } from './tick-request.js';
export {
  TICK_LIMITS,
  TICK_REQUEST_FIELDS,
  SNAPSHOT_FIELDS,
  SELF_STATE_FIELDS,
  TARGET_FIELDS,
  POI_FIELDS,
  HEARD_FIELDS,
  PROFILE_FIELDS,
  TRAIT_FIELDS,
  VEC3_KEYS,
  type Field,
  type Fields,
  type FieldKind,
  type ValueSpec,
  type NumberSpec,
  type IntegerSpec,
  type StringSpec,
  type EnumSpec,
  type ListSpec,
  type ObjectSpec,
} from './tick-schema.js';
export type { WorkerTask, WorkerReply, WorkerTelemetry } from './worker.js';
export {
  checkFlags,
  evaluateFlag,
  bucketOf,
  flagsOf,
  FLAG_LIMITS,
  FLAG_TYPES,
  type Flags,
  type FlagDefinition,
  type FlagRule,
  type FlagCondition,
  type FlagContext,
  type FlagResult,
  type FlagValue,
  type FlagType,
  type FlagReason,
} from './flags.js';
