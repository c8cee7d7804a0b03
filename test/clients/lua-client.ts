import { join } from 'node:path';
import { clientsDir, driversDir, missingTool, run } from './helpers.js';

/** Null when `require(module)` works under lua5.4, else the reason naming the Debian package. */
async function luaModuleMissing(module: string, debianPackage: string): Promise<string | null> {
  const r = await run('lua5.4', ['-e', `require(${JSON.stringify(module)})`]);
  return r.status === 0 ? null : `${debianPackage} is missing (apt-get install ${debianPackage}; CI installs it via .ci/run)`;
}

/** Why the pure Lua tests (fixtures, schedule, options, perception) skip here: only lua5.4 is needed. */
export const skip = missingTool('lua5.4', '-v', 'lua5.4');
/** Why the tests against a real sidecar skip: they need LuaSocket as the tests' HTTP function. */
export const skipLive = skip ?? (await luaModuleMissing('socket.http', 'lua-socket'));
/** Why the test of an injected runtime decoder skips: it injects lua-cjson's. */
export const skipCjson = skip ?? (await luaModuleMissing('cjson', 'lua-cjson'));
export const CLIENT = join(clientsDir, 'lua');
export const driver = (...args: string[]) => run('lua5.4', [join(driversDir, 'lua_driver.lua'), CLIENT, ...args]);
export const client = { name: 'lua client', skip, driver, signs: false, splitsLongLists: false, errorsInBody: true };
export const liveClient = { ...client, skip: skipLive };

/** lua-cjson writes an empty Lua table as `{}`: read that back as the empty list it stands for. */
export function list(v: unknown): unknown {
  return !Array.isArray(v) && typeof v === 'object' && v !== null && Object.keys(v).length === 0 ? [] : v;
}
