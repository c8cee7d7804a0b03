import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { commandsFor, loadCommands } from '../../src/cli/commands/index.js';

/**
 * Packages only a running server or sidecar needs: the metrics (prom-client), the sidecar's
 * worker pool (piscina) and multipart uploads (busboy). Every CLI start defines every command,
 * so a command that imported its server at the top would make `--help`, `--version` and every
 * spawned light command load them too.
 */
const SERVER_ONLY = ['prom-client', 'piscina', 'busboy'];

test('defining every command and its help loads no server: each command loads its own modules when it runs', async () => {
  const program = new Command('brainstem');
  for (const register of await loadCommands()) register(program);
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

test('defining every command opens no database driver, MessagePack or uWebSockets', async () => {
  const program = new Command('brainstem');
  for (const register of await loadCommands()) register(program);
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  for (const name of RUN_ONLY) {
    assert.deepEqual(
      loaded.filter((file) => file.includes(`/node_modules/${name}/`)),
      [],
      `${name} was loaded by defining the commands`,
    );
  }
});

/** Every command's help, and its subcommands', by full name. */
function helps(program: Command): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (cmd: Command, prefix: string): void => {
    for (const sub of cmd.commands) {
      out.set(`${prefix}${sub.name()}`, sub.helpInformation());
      walk(sub, `${prefix}${sub.name()} `);
    }
  };
  walk(program, '');
  return out;
}

test('a command line naming a command defines that command alone, with the same definition and help as among all', async () => {
  const all = new Command('brainstem');
  const every = await loadCommands();
  for (const register of every) register(all);
  const whole = helps(all);
  for (const name of all.commands.map((c) => c.name())) {
    const registers = await commandsFor([name, '--help']);
    assert.equal(registers.length, 1, `${name} defined alone`);
    const alone = new Command('brainstem');
    registers[0]!(alone);
    assert.ok(
      alone.commands.some((c) => c.name() === name),
      `${name}'s module defines ${name}`,
    );
    for (const [full, help] of helps(alone)) assert.equal(help, whole.get(full), `${full} --help`);
  }
  // No command named (the program's own flags, help, a mistyped name that commander answers with a suggestion): all of them.
  for (const args of [[], ['--help'], ['--version'], ['help', 'serve'], ['serv'], ['--', 'serve']]) {
    assert.equal((await commandsFor(args)).length, every.length, JSON.stringify(args));
  }
});
