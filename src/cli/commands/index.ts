import type { RegisterCommand } from '../util.js';
import { registerBundle } from './bundle.js';
import { registerServe } from './serve.js';
import { registerAdmin } from './admin.js';
import { registerSim } from './sim.js';

/** Every CLI command, in the order --help lists them. */
export const commands: RegisterCommand[] = [registerServe, registerAdmin, registerBundle, registerSim];
