import type { RegisterCommand } from '../util.js';
import { registerBench } from './bench.js';
import { registerBundle } from './bundle.js';
import { registerConfig } from './config.js';
import { registerServe } from './serve.js';
import { registerAdmin } from './admin.js';
import { registerPlugins } from './plugins.js';
import { registerWebhooks } from './webhooks.js';
import { registerSidecar } from './sidecar.js';
import { registerSim } from './sim.js';
import { registerUp } from './up.js';
import { registerMigrateStore } from './migrate-store.js';
import { registerKeys } from './keys.js';

/** Every CLI command, in the order --help lists them. */
export const commands: RegisterCommand[] = [
  registerSidecar,
  registerServe,
  registerUp,
  registerAdmin,
  registerMigrateStore,
  registerBundle,
  registerKeys,
  registerConfig,
  registerWebhooks,
  registerPlugins,
  registerSim,
  registerBench,
];
