/** The brain's public surface: what src/ may import. */
export * from './types.js';
export { validateBundle, policyOn, DEFAULT_BUNDLE, BUNDLE_LIMITS, type BundleCheck } from './bundle.js';
export { Brain, type BrainOptions } from './brain.js';
export { parseTickRequest, TICK_LIMITS, type TickParse } from './tick-request.js';
export type { WorkerTask, WorkerReply, WorkerTelemetry } from './worker.js';
