/** The brain's public surface: what src/ may import. */
export * from './types.js';
export { isObj, type Obj } from './json.js';
export { validateBundle, policyOn, DEFAULT_BUNDLE, BUNDLE_LIMITS, type BundleCheck } from './bundle.js';
export { Brain, type BrainOptions, type Persona } from './brain.js';
export { BrainStateError, STATE_FORMAT, STATE_VERSION, type BrainState } from './state-io.js';
export { COUNTER_KINDS, type CounterKind } from './counters.js';
export type { MemorySummary } from './memory.js';
export { parseTickRequest, TICK_LIMITS, type TickParse } from './tick-request.js';
export type { WorkerTask, WorkerReply, WorkerTelemetry } from './worker.js';
