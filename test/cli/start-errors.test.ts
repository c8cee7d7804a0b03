import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/paths.js';
import { withTakenPort } from '../helpers/taken-port.js';

/** Without an admin token serve warns once it runs; a start that fails says only why. */
const NO_ADMIN = { SERVICE_ADMIN_TOKEN: '' };

function oneLine(r: { code: number; stderr: string }, what: string): string {
  assert.equal(r.code, 1, what);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${what}: ${r.stderr}`);
  assert.match(lines[0]!, /^brainstem: /, what);
  return lines[0]!;
}

test('serve: a bad flag value is the only line, and nothing is created', async () => {
  const dir = tempDir();
  try {
    const flags = [
      ['--render-concurrency', '0'],
      ['--billing', 'paypal'],
      ['--max-connections', '0'],
    ];
    // At once: each is a process start of its own.
    await Promise.all(
      flags.map(async (flag, i) => {
        const data = join(dir.path, `stack${i}`);
        const line = oneLine(await runCli(['serve', '--addr', '127.0.0.1:0', '--data-dir', data, ...flag], NO_ADMIN), flag.join(' '));
        assert.match(line, new RegExp(flag[0]!), line);
        assert.equal(existsSync(data), false, `${flag.join(' ')} created the data directory`);
      }),
    );
  } finally {
    dir.dispose();
  }
});

// Number() read '' as 0, so `--port "$PORT"` with PORT unset listened on a random port, and `0x2`, `1e0`, `+3` passed as integers.
test('an integer flag in another form than plain digits (empty, hex, exponent, sign, spaces) is one line naming it, and nothing starts', async () => {
  const dir = tempDir();
  try {
    const cases: string[][] = [
      ['webhooks', 'listen', '--port', ''],
      ['webhooks', 'listen', '--port', ' '],
      ['webhooks', 'listen', '--port', '0x50'],
      ['sidecar', '--addr', '127.0.0.1:0', '--workers', '1e0'],
      ['sidecar', '--addr', '127.0.0.1:0', '--workers', '+1'],
      ['serve', '--addr', '127.0.0.1:0', '--data-dir', join(dir.path, 'serve'), '--render-concurrency', '2.0'],
    ];
    await Promise.all(
      cases.map(async (args) => {
        const r = await runCli(args, { ...NO_ADMIN, BRAINSTEM_WEBHOOK_SECRET: 'whsec_x' });
        const flag = args[args.length - 2]!;
        assert.match(oneLine(r, args.join(' ')), new RegExp(`${flag} must be an integer from \\d+ to \\d+, got "`), args.join(' '));
      }),
    );
    assert.equal(existsSync(join(dir.path, 'serve')), false);
  } finally {
    dir.dispose();
  }
});

test('serve and sidecar on a taken port: one line naming the flag that picks another', async () => {
  const dir = tempDir();
  try {
    await withTakenPort(async (addr) => {
      const cases: [string[], RegExp][] = [
        [['serve', '--addr', addr, '--db', join(dir.path, 'serve.db')], /already in use; .*give --addr HOST:PORT/],
        [['sidecar', '--addr', addr, '--data-dir', dir.path], /already in use; .*give --addr HOST:PORT/],
      ];
      await Promise.all(
        cases.map(async ([args, expected]) => {
          const r = await runCli(args, NO_ADMIN);
          assert.equal(r.code, 1, args.join(' '));
          assert.match(oneLine(r, args.join(' ')), expected);
        }),
      );
    });
  } finally {
    dir.dispose();
  }
});

test('an address that is not one of this machine: one line naming the flag that picks another (--addr; --host for webhooks listen)', async () => {
  const dir = tempDir();
  try {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine.
    const [serve, listen] = await Promise.all([
      runCli(['serve', '--addr', '192.0.2.1:0', '--db', join(dir.path, 'serve.db'), '--insecure-http'], NO_ADMIN),
      runCli(['webhooks', 'listen', '--host', '192.0.2.1', '--port', '0'], { BRAINSTEM_WEBHOOK_SECRET: 'whsec_x' }),
    ]);
    assert.match(oneLine(serve, 'serve'), /cannot listen on 192\.0\.2\.1:0: EADDRNOTAVAIL; give --addr HOST:PORT with an address of this machine/);
    assert.match(oneLine(listen, 'listen'), /cannot listen on 192\.0\.2\.1:0: EADDRNOTAVAIL; give --host HOST with an address of this machine/);
  } finally {
    dir.dispose();
  }
});

test('webhooks listen on a taken port: one line naming --port', () =>
  withTakenPort(async (addr) => {
    const port = addr.split(':')[1]!;
    const r = await runCli(['webhooks', 'listen', '--port', port], { BRAINSTEM_WEBHOOK_SECRET: 'whsec_x' });
    assert.match(oneLine(r, 'listen'), /already in use; .*give --port PORT \(0 picks a free one\)$/);
  }));

test('a database that cannot be opened: one line naming the fix (unreachable PostgreSQL, a file that is no database)', async () => {
  const dir = tempDir();
  try {
    const notDb = join(dir.path, 'notes.db');
    writeFileSync(notDb, 'not a database, just notes\n'.repeat(40));
    const [unreachable, admin, file] = await Promise.all([
      runCli(['serve', '--addr', '127.0.0.1:0', '--database', 'postgres://u:secret@127.0.0.1:1/x'], NO_ADMIN),
      runCli(['admin', '--database', 'postgres://u:secret@127.0.0.1:1/x', 'create-tenant', '--name', 't']),
      runCli(['serve', '--addr', '127.0.0.1:0', '--db', notDb], NO_ADMIN),
    ]);
    assert.match(oneLine(unreachable, 'unreachable'), /ECONNREFUSED [^;]*; is PostgreSQL running and reachable there\? .*--database \(or DATABASE_URL\)/);
    assert.doesNotMatch(unreachable.stderr, /secret/);
    assert.match(oneLine(admin, 'admin'), /is PostgreSQL running/);
    assert.match(oneLine(file, 'not a database'), /file is not a database; give --db a brainstem SQLite file/);
  } finally {
    dir.dispose();
  }
});

test("a malformed --addr is the only line, and its example is the command's own default address", async () => {
  const dir = tempDir();
  try {
    const cases: [string[], string][] = [
      [['serve', '--addr', 'nowhere', '--data-dir', join(dir.path, 'serve')], '127.0.0.1:8080'],
      [['up', '--addr', 'nowhere', '--data-dir', join(dir.path, 'up')], '127.0.0.1:8080'],
      [['up', '--sidecar-addr', 'nowhere', '--data-dir', join(dir.path, 'up2')], '127.0.0.1:8088'],
      [['sidecar', '--addr', 'nowhere', '--data-dir', join(dir.path, 'sidecar')], '127.0.0.1:8088'],
    ];
    await Promise.all(
      cases.map(async ([args, example]) => {
        const line = oneLine(await runCli(args, NO_ADMIN), args.join(' '));
        assert.ok(line.includes(`must look like HOST:PORT (for example ${example}), got "nowhere"`), line);
      }),
    );
  } finally {
    dir.dispose();
  }
});
