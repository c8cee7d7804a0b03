import { join } from 'node:path';
import { clientsDir, driversDir, missingTool, pythonExecutable, run } from './helpers.js';

/** Why the Python client's tests skip here, or null. */
export const skip = missingTool('python3', '--version', 'python3');
export const PYTHON = skip ? 'python3' : await pythonExecutable();
export const CLIENT = join(clientsDir, 'python');
export const driver = (...args: string[]) => run(PYTHON, [join(driversDir, 'python_driver.py'), CLIENT, ...args]);
export const client = { name: 'python client', skip, driver, signs: true, splitsLongLists: true };
