import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { commands } from '../../src/cli/commands/index.js';

/**
 * Packages only a running server or sidecar needs: the metrics (prom-client), the sidecar's
 * worker pool (piscina) and multipart uploads (busboy). Every CLI start defines every command,
 * so a command that imported its server at the top would make `--help`, `--version` and every
 * spawned light command load them too.
 */
const SERVER_ONLY = ['prom-client', 'piscina', 'busboy'];

test('defining every command and its help loads no server: each command loads its own modules when it runs', () => {
  const program = new Command('brainstem');
  for (const register of commands) register(program);
  assert.ok(program.helpInformation().includes('serve'));
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  for (const name of SERVER_ONLY) {
    assert.deepEqual(
      loaded.filter((file) => file.includes(`/node_modules/${name}/`)),
      [],
      `${name} was loaded by defining the commands`,
    );
  }
});

/**
 * Drivers and codecs a command loads only when it opens a database, reads a bundle or serves:
 * SQLite, PostgreSQL, MessagePack and uWebSockets. Before, defining the commands loaded the
 * first, third and fourth, which every spawned CLI in the test suite paid for.
 */
const RUN_ONLY = ['better-sqlite3', 'pg', '@msgpack/msgpack', 'uWebSockets.js'];

test('defining every command opens no database driver, MessagePack or uWebSockets', () => {
  const program = new Command('brainstem');
  for (const register of commands) register(program);
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  for (const name of RUN_ONLY) {
    assert.deepEqual(
      loaded.filter((file) => file.includes(`/node_modules/${name}/`)),
      [],
      `${name} was loaded by defining the commands`,
    );
  }
});
