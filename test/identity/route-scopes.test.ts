import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROUTE_SCOPES, TOKEN_SCOPES, tokenAdmits, type RouteScope } from '../../src/http/scope.js';
import { startTestServer } from '../helpers/embedded.js';
import { repoRoot } from '../helpers/paths.js';

// A personal access token's scopes are checked against the scope each route declares where it
// is mounted (HttpServer.scoped): these tests hold every route of `serve` to having declared
// one, and the manual's scope table to the declarations.

/** `METHOD /path/{param}` for every route of a running `serve` (HEAD left out: it is its GET), with its declared scope. */
async function serveRoutes(): Promise<Map<string, RouteScope | undefined>> {
  const s = await startTestServer();
  try {
    const out = new Map<string, RouteScope | undefined>();
    for (const { pattern, methods, scopes } of s.routes()) {
      for (const method of methods) {
        if (method === 'HEAD') continue;
        out.set(`${method} ${pattern.replace(/:(\w+)/g, '{$1}')}`, scopes[method as keyof typeof scopes]);
      }
    }
    return out;
  } finally {
    await s.stop();
  }
}

const declared = (routes: Map<string, RouteScope | undefined>, scope: RouteScope) =>
  [...routes]
    .filter(([, s]) => s === scope)
    .map(([route]) => route)
    .sort();

/** The `METHOD /path` items quoted in a stretch of the manual. */
const quotedRoutes = (text: string) => [...text.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE) \/[^`]*)`/g)].map((m) => m[1]!).sort();

test('every route of serve declares its scope (or that it is public)', async () => {
  const routes = await serveRoutes();
  assert.ok(routes.size > 100, `${routes.size} routes`);
  const undeclared = [...routes].filter(([, scope]) => scope === undefined).map(([route]) => route);
  assert.deepEqual(undeclared, [], 'mount these through server.scoped(…) (see src/http/scope.ts)');
  const unknown = [...routes].filter(([, scope]) => !(ROUTE_SCOPES as readonly (string | undefined)[]).includes(scope));
  assert.deepEqual(unknown, []);
  // The admin and sidecar routes are where their paths say, and nothing else is.
  for (const [route, scope] of routes) {
    assert.equal(scope === 'admin', /^\w+ \/(v1\/admin\/|metrics$)/.test(route), `${route} is ${scope}`);
  }
  assert.deepEqual(declared(routes, 'server-key'), ['GET /v1/config', 'GET /v1/config/stream', 'POST /v1/telemetry']);
});

test("the manual's scope table names exactly the routes each scope was declared on", async () => {
  const routes = await serveRoutes();
  const manual = readFileSync(join(repoRoot, 'docs', 'controlplane.md'), 'utf8');
  const start = manual.indexOf('### Personal access tokens');
  const section = manual.slice(start, manual.indexOf('\n#', start + 1));
  const rows = new Map([...section.matchAll(/^\| `([a-z:]+)` \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual([...rows.keys()], [...TOKEN_SCOPES], 'one row per token scope, narrowest first');

  assert.deepEqual(quotedRoutes(rows.get('config:read')!), declared(routes, 'config:read'));
  assert.deepEqual(quotedRoutes(rows.get('config:write')!), declared(routes, 'config:write'));
  const never = /No scope admits ([^:]*):/.exec(section);
  assert.ok(never, 'the manual names the routes no token scope admits');
  assert.deepEqual(quotedRoutes(never[1]!), declared(routes, 'login'));
});

test('a token scope admits its own routes and those of every narrower scope; no scope admits login, admin or server-key routes', () => {
  assert.equal(tokenAdmits(['config:read'], 'config:read'), true);
  assert.equal(tokenAdmits(['config:read'], 'config:write'), false);
  assert.equal(tokenAdmits(['config:write'], 'config:read'), true);
  assert.equal(tokenAdmits(['config:write'], 'full'), false);
  assert.equal(tokenAdmits(['config:read', 'full'], 'full'), true);
  for (const scope of ['login', 'admin', 'server-key', null] as const) assert.equal(tokenAdmits(['full'], scope), false, String(scope));
  assert.equal(tokenAdmits(['config:read'], 'public'), true, 'anyone may call a public route, a token holder too');
});
