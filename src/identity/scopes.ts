import type { Method } from '../http/server.js';
import type { TokenScope } from './types.js';

/**
 * The routes a personal access token's scope admits, by method and path. Scopes exist so that a
 * token kept in a CI system can publish configuration and nothing else; `full` is for scripts
 * that act as the user. No scope admits managing personal tokens or logging out: a leaked token
 * cannot mint another one.
 */
const CONFIG_READ: readonly [Method, RegExp][] = [
  ['GET', /^\/v1\/servers\/?$/],
  ['GET', /^\/v1\/servers\/[^/]+\/?$/],
  ['GET', /^\/v1\/servers\/[^/]+\/config(\/versions(\/[^/]+)?)?\/?$/],
];

const CONFIG_WRITE: readonly [Method, RegExp][] = [
  ...CONFIG_READ,
  ['PUT', /^\/v1\/servers\/[^/]+\/config\/?$/],
  ['POST', /^\/v1\/servers\/[^/]+\/config\/rollback\/?$/],
];

const NEVER = /^\/v1\/(tokens(\/.*)?|auth\/logout)\/?$/;

const admitted = (routes: readonly [Method, RegExp][], method: Method, path: string): boolean =>
  routes.some(([m, re]) => (m === method || (m === 'GET' && method === 'HEAD')) && re.test(path));

export function scopeAdmits(scopes: readonly TokenScope[], method: Method, path: string): boolean {
  if (NEVER.test(path)) return false;
  for (const scope of scopes) {
    switch (scope) {
      case 'full':
        return true;
      case 'config:write':
        if (admitted(CONFIG_WRITE, method, path)) return true;
        break;
      case 'config:read':
        if (admitted(CONFIG_READ, method, path)) return true;
        break;
      default: {
        const unknown: never = scope;
        throw new Error(`unknown token scope ${String(unknown)}`);
      }
    }
  }
  return false;
}
