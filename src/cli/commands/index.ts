import type { RegisterCommand } from '../util.js';
import { registerBench } from './bench.js';
import { registerBundle } from './bundle.js';
import { registerSidecar } from './sidecar.js';

/** Every CLI command, in the order --help lists them. */
export const commands: RegisterCommand[] = [registerSidecar, registerBundle, registerBench];
