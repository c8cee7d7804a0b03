import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { HttpServer } from '../../src/http/server.js';
import { text } from '../../src/http/reply.js';
import { tempDir } from '../helpers/paths.js';
import { freePort } from '../helpers/taken-port.js';

// A dependency that is down or busy for a while is the client's cue to try again (503 with
// Retry-After), not a fault of this server (500): each failure here is the real driver's error.

const dir = tempDir('brainstem-transient-');
let server: HttpServer;
let base: string;
let silent: Server;
const silentSockets = new Set<Socket>();
let refusedPort: number;

before(async () => {
  refusedPort = await freePort();
  // Takes the connection and never speaks: a PostgreSQL that hangs.
  silent = createServer((socket) => silentSockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentPort = (silent.address() as { port: number }).port;

  server = new HttpServer();
  server.get('/pg-refused', async () => {
    const pool = new pg.Pool({ connectionString: `postgres://u:p@127.0.0.1:${refusedPort}/db` });
    try {
      await pool.query('SELECT 1');
    } finally {
      await pool.end();
    }
    return text(200, 'unreachable');
  });
  server.get('/pg-silent', async () => {
    const pool = new pg.Pool({ connectionString: `postgres://u:p@127.0.0.1:${silentPort}/db`, connectionTimeoutMillis: 100 });
    try {
      await pool.query('SELECT 1');
    } finally {
      await pool.end();
    }
    return text(200, 'unreachable');
  });
  server.get('/sqlite-busy', () => {
    const file = join(dir.path, 'busy.db');
    const holder = new Database(file);
    const waiter = new Database(file, { timeout: 0 });
    try {
      holder.exec('CREATE TABLE IF NOT EXISTS t (x); BEGIN EXCLUSIVE');
      waiter.prepare('INSERT INTO t VALUES (1)').run();
    } finally {
      holder.close();
      waiter.close();
    }
    return text(200, 'unreachable');
  });
  server.get('/unique', () => {
    throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
  });
  server.get('/bug', () => {
    throw new TypeError("Cannot read properties of undefined (reading 'x')");
  });
  base = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
});

after(async () => {
  await server.close();
  // close() waits for every connection to end, and the silent server never ends one itself.
  for (const socket of silentSockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
  dir.dispose();
});

for (const path of ['/pg-refused', '/pg-silent', '/sqlite-busy']) {
  test(`a dependency unavailable for now (${path.slice(1)}) is 503 unavailable with Retry-After, in the error shape`, async () => {
    const res = await fetch(base + path);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '1');
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'unavailable');
    assert.match(body.error.message, /try again/);
  });
}

test('a constraint violation or a bug is still 500 internal, with no detail of it', async () => {
  for (const path of ['/unique', '/bug']) {
    const res = await fetch(base + path);
    assert.equal(res.status, 500, path);
    assert.equal(res.headers.get('retry-after'), null);
    assert.deepEqual(await res.json(), { error: { code: 'internal', message: 'Internal server error.' } });
  }
});
