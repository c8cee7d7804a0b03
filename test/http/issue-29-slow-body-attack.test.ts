import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { spawnCli, stop } from '../stack/helpers.js';
import { tempDir } from '../helpers/paths.js';
import { fullTick } from '../sidecar/helpers.js';

/**
 * Issue 29's attack, as a test: 100 connections without a credential each announce a body
 * near the route's limit and send it as fast as the server takes it, then hold the connection.
 * Before the fix a sidecar with --token read every /ticks body whole (4 MiB each) before its
 * 401, and serve 1 MiB each before its auth: RSS grew by hundreds of MB. The bound here is
 * generous (a fraction of what the bodies would take); the check is memory, not time.
 */
const ATTACKERS = 100;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

/** One attacker: the headers, then the body as fast as the socket takes it, up to `length` bytes; resolves once it sent all or the server closed. */
function attack(port: number, head: string, length: number, sockets: Socket[]): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let sent = 0;
    let settled = false;
    const settle = (): void => {
      if (!settled) {
        settled = true;
        resolve();
      }
    };
    socket.on('error', settle);
    socket.on('close', settle);
    const pump = (): void => {
      while (sent < length - CHUNK.length && !socket.destroyed) {
        sent += CHUNK.length;
        if (!socket.write(CHUNK)) {
          socket.once('drain', pump);
          return;
        }
      }
      // Everything but the last chunk is out: the attacker holds the connection from here.
      settle();
    };
    socket.on('connect', () => {
      socket.write(head.replace(/\n/g, '\r\n'));
      pump();
    });
  });
}

async function underAttack(pid: number, port: number, head: string, length: number): Promise<{ before: number; during: number; sockets: Socket[] }> {
  const before = rssBytes(pid);
  const sockets: Socket[] = [];
  await Promise.all(Array.from({ length: ATTACKERS }, () => attack(port, head, length, sockets)));
  const during = rssBytes(pid);
  return { before, during, sockets };
}

test('issue 29: 100 slow unauthenticated /ticks bodies against a sidecar with --token: RSS growth bounded, legitimate ticks still answered', async () => {
  const dir = tempDir();
  const sidecar = await spawnCli(['sidecar', '--addr', '127.0.0.1:0', '--token', 'the-token', '--workers', '0', '--state', ''], /listening on (http:\/\/\S+)/, {
    cwd: dir.path,
  });
  const url = sidecar.match[1]!;
  const port = Number(new URL(url).port);
  let sockets: Socket[] = [];
  try {
    const tick = (): Promise<Response> =>
      fetch(`${url}/tick`, {
        method: 'POST',
        headers: { authorization: 'Bearer the-token', 'content-type': 'application/json' },
        body: JSON.stringify(fullTick()),
      });
    assert.equal((await tick()).status, 200);
    const length = 4 * 1024 * 1024 - 1024;
    const r = await underAttack(
      sidecar.child.pid!,
      port,
      `POST /ticks HTTP/1.1\nhost: a\ncontent-type: application/json\ncontent-length: ${length}\n\n`,
      length,
    );
    sockets = r.sockets;
    const grown = r.during - r.before;
    assert.ok(grown < 100 * 1024 * 1024, `RSS grew by ${(grown / 1048576).toFixed(1)} MB under the attack (${ATTACKERS} × ${length} bytes announced)`);
    const answered = await tick();
    assert.equal(answered.status, 200);
    assert.ok(Array.isArray(((await answered.json()) as { intents: unknown[] }).intents));
  } finally {
    for (const s of sockets) s.destroy();
    await stop(sidecar.child);
    dir.dispose();
  }
});

test('issue 29: 100 slow unauthenticated bodies against serve: RSS growth bounded, a logged-in request still answered', async () => {
  const dir = tempDir();
  const serve = await spawnCli(
    ['serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'a.db'), '--data', join(dir.path, 'data')],
    /listening on (http:\/\/\S+)/,
  );
  const url = serve.match[1]!;
  const port = Number(new URL(url).port);
  let sockets: Socket[] = [];
  try {
    assert.equal((await fetch(`${url}/health`)).status, 200);
    const length = 1024 * 1024 - 1024;
    const r = await underAttack(
      serve.child.pid!,
      port,
      `POST /v1/servers HTTP/1.1\nhost: a\ncontent-type: application/json\ncontent-length: ${length}\n\n`,
      length,
    );
    sockets = r.sockets;
    const grown = r.during - r.before;
    assert.ok(grown < 50 * 1024 * 1024, `RSS grew by ${(grown / 1048576).toFixed(1)} MB under the attack (${ATTACKERS} × ${length} bytes announced)`);
    const tenants = await fetch(`${url}/v1/admin/tenants`, {
      method: 'POST',
      headers: { authorization: 'Bearer bsa_stack_test_admin', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'still-answered', plan: 'pro' }),
    });
    assert.equal(tenants.status, 201);
  } finally {
    for (const s of sockets) s.destroy();
    await stop(serve.child);
    dir.dispose();
  }
});
