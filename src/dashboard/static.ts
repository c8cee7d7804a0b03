import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpServer, Request } from '../http/server.js';
import type { Reply } from '../http/reply.js';
import { HttpError } from '../http/errors.js';
import type { Logger } from '../log.js';

/** The repository root, from this file compiled at dist/src/dashboard/static.js. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Vendor files the page may load, by the name the import map uses. An explicit list rather than
 * a window onto node_modules, so nothing else of the install is reachable over HTTP.
 */
const VENDOR: Record<string, string> = {
  'preact.mjs': 'node_modules/preact/dist/preact.mjs',
  'preact-hooks.mjs': 'node_modules/preact/hooks/dist/hooks.mjs',
  'htm.mjs': 'node_modules/htm/dist/htm.mjs',
  'uplot.mjs': 'node_modules/uplot/dist/uPlot.esm.js',
  'uplot.css': 'node_modules/uplot/dist/uPlot.min.css',
};

/**
 * Added to every dashboard response (nosniff comes with every response of the server). The
 * page runs only files it is served from this origin: no inline script or style, no plugin,
 * no <base>, and no other site may frame it (clickjacking); no Referer leaks a URL elsewhere.
 * Videos and posters load from this origin too, through signed asset URLs.
 */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
};

/**
 * Where the page's bare module names resolve. An import map would be an inline script, which
 * the policy above forbids, so the served modules (the page's and the vendor files') have
 * these names rewritten to their paths instead.
 */
const IMPORTS: Record<string, string> = {
  preact: '/vendor/preact.mjs',
  'preact/hooks': '/vendor/preact-hooks.mjs',
  htm: '/vendor/htm.mjs',
  uplot: '/vendor/uplot.mjs',
};

/** A static import, re-export or dynamic import of one of the IMPORTS names, in either quote. */
const BARE_IMPORT = new RegExp(
  `(\\bfrom\\s*|\\bimport\\s*\\(?\\s*)(["'])(${Object.keys(IMPORTS)
    .map((n) => n.replace('/', '\\/'))
    .join('|')})\\2`,
  'g',
);

/** A module's text with its bare imports pointing at the served vendor files. */
export function resolveImports(source: string): string {
  return source.replace(BARE_IMPORT, (_, lead: string, quote: string, name: string) => `${lead}${quote}${IMPORTS[name]}${quote}`);
}

/** The page's icon, in dashboard/ beside index.html; served from this origin, which the policy's default-src admits. */
const FAVICON = 'favicon.svg';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
};

export interface DashboardOptions {
  /** Repository root holding `dashboard/` (index.html, style.css) and `dist/dashboard/` (compiled JS); default the one this module was built in. */
  root?: string;
  logger?: Logger;
  /** The clock of the re-listing gate; default Date.now. */
  now?: () => number;
}

/**
 * A name missing from the compiled tree lists the tree again at most this often: the tree can
 * change under a running server (tsc --watch), but an anonymous client asking for names that
 * do not exist must not make every request walk the directory.
 */
export const RELIST_AFTER_MS = 1000;

interface Asset {
  file: string;
  type: string;
  /** Loaded on first request and reloaded when the file's mtime or size changes (a rebuild). */
  cached?: { mtimeMs: number; size: number; body: Buffer; etag: string };
}

/**
 * Serves the operator dashboard: `GET /` (index.html), `GET /app/*` (the compiled page code
 * and its stylesheet), `GET /vendor/*` (the allowlisted vendor modules). Only files known when
 * the route is asked for are served: a path is looked up in a table built from the directory
 * listing, never joined onto a directory, so `..` and encoded variants cannot escape.
 */
export function mountDashboard(server: HttpServer, options: DashboardOptions = {}): void {
  const anyone = server.scoped('public');
  const root = options.root ?? ROOT;
  const source = join(root, 'dashboard');
  const compiled = join(root, 'dist', 'dashboard');
  const vendor = new Map<string, Asset>(Object.entries(VENDOR).map(([name, path]) => [name, asset(join(root, path))]));
  const index = asset(join(source, 'index.html'));
  const app = new Map<string, Asset>();
  if (!existsSync(join(compiled, 'main.js'))) {
    options.logger?.warn('dashboard: dist/dashboard/main.js is missing, the page at / will not start; run `npm run build` (tsc -p dashboard)');
  }

  const now = options.now ?? Date.now;
  let listedAt = -Infinity;
  // A listing fills the whole table: a page asks for its stylesheets, modules and icon within
  // the same second, and each must be found by the one listing the first of them caused.
  const relist = (): void => {
    listedAt = now();
    const files = new Map<string, string>([
      ['style.css', join(source, 'style.css')],
      // The map renderer's stylesheet, beside its modules (the replay page inlines the same file).
      ['map.css', join(source, 'map', 'map.css')],
      [FAVICON, join(source, FAVICON)],
    ]);
    for (const file of listFiles(compiled)) files.set(relative(compiled, file).split(sep).join('/'), file);
    for (const [name, file] of files) {
      if (typeFor(file) && app.get(name)?.file !== file) app.set(name, asset(file));
    }
  };
  const appAsset = (name: string): Asset | undefined => {
    if (!app.has(name) && now() - listedAt >= RELIST_AFTER_MS) relist();
    return app.get(name);
  };

  anyone.get('/', (req) => serve(req, index, 'no-cache'), { body: 'none' });
  // The compiled code changes with every build and has no hash in its name: revalidate each time (cheap with the ETag).
  anyone.get('/app/*', (req) => serve(req, appAsset(req.path.slice('/app/'.length)), 'no-cache'), { body: 'none' });
  // Browsers ask for /favicon.ico on every page that names no icon, and tools still do: the same SVG.
  anyone.get('/favicon.ico', (req) => serve(req, appAsset(FAVICON), 'public, max-age=86400'), { body: 'none' });
  anyone.get('/vendor/*', (req) => serve(req, vendor.get(req.path.slice('/vendor/'.length)), 'public, max-age=3600'), { body: 'none' });
}

function asset(file: string): Asset {
  return { file, type: typeFor(file) ?? 'application/octet-stream' };
}

function typeFor(file: string): string | undefined {
  const dot = file.lastIndexOf('.');
  return dot < 0 ? undefined : TYPES[file.slice(dot)];
}

/** Files under `dir`; links are not followed and a tree changing meanwhile lists what is there. */
function listFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listFiles(path);
    return entry.isFile() ? [path] : [];
  });
}

function serve(req: Request, found: Asset | undefined, cacheControl: string): Reply {
  if (!found) throw new HttpError('not_found', `No such file: ${req.path}`);
  let stat;
  try {
    stat = statSync(found.file);
  } catch {
    throw new HttpError('not_found', `No such file: ${req.path}`);
  }
  let cached = found.cached;
  if (!cached || cached.mtimeMs !== stat.mtimeMs || cached.size !== stat.size) {
    const raw = readFileSync(found.file);
    const body = found.type.startsWith('text/javascript') ? Buffer.from(resolveImports(raw.toString('utf8'))) : raw;
    cached = found.cached = { mtimeMs: stat.mtimeMs, size: stat.size, body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
  }
  const headers = {
    'content-type': found.type,
    etag: cached.etag,
    'cache-control': cacheControl,
    ...DASHBOARD_HEADERS,
  };
  const inm = req.headers['if-none-match'];
  if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === cached.etag || t.trim() === '*')) {
    return { status: 304, headers };
  }
  return { status: 200, headers, body: cached.body };
}
