import { join } from 'node:path';
import { clientsDir, driversDir, missingTool, run } from './helpers.js';

/** The driver needs LuaSocket (the tests' HTTP function) and lua-cjson (to read fixtures). */
async function luaLibsMissing(): Promise<string | null> {
  const r = await run('lua5.4', ['-e', 'require("socket.http") require("cjson")']);
  return r.status === 0 ? null : 'LuaSocket or lua-cjson is missing (apt-get install lua-socket lua-cjson; CI installs them via .ci/run)';
}

/** Why the Lua client's tests skip here, or null. */
export const skip = missingTool('lua5.4', '-v', 'lua5.4 lua-socket lua-cjson') ?? (await luaLibsMissing());
export const CLIENT = join(clientsDir, 'lua');
export const driver = (...args: string[]) => run('lua5.4', [join(driversDir, 'lua_driver.lua'), CLIENT, ...args]);
export const client = { name: 'lua client', skip, driver, signs: false, splitsLongLists: false };

/** lua-cjson writes an empty Lua table as `{}`: read that back as the empty list it stands for. */
export function list(v: unknown): unknown {
  return !Array.isArray(v) && typeof v === 'object' && v !== null && Object.keys(v).length === 0 ? [] : v;
}
