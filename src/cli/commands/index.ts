import type { RegisterCommand } from '../util.js';
import { registerBundle } from './bundle.js';

/** Every CLI command, in the order --help lists them. */
export const commands: RegisterCommand[] = [registerBundle];
