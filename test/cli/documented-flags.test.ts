import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { loadCommands } from '../../src/cli/commands/index.js';
import { repoRoot } from '../helpers/paths.js';

/** Flags the docs give to other programs (createuser, createdb, prlimit, node, tsc), not to brainstem. */
const OTHER_TOOLS_FLAGS = new Set(['--pwprompt', '--owner', '--as', '--nofile', '--stack', '--test', '--watch']);
// The test runner's own options (`node scripts/run-tests.mjs --alone`), read from its source so the two cannot drift.
const RUNNER_FLAGS = new Set(
  [
    ...(/const flags = new Set\(\[([^\]]*)\]\)/.exec(readFileSync(join(repoRoot, 'scripts', 'run-tests.mjs'), 'utf8'))?.[1] ?? '').matchAll(/'(--[a-z-]+)'/g),
  ].map((m) => m[1]),
);
/** Flags every command has from commander itself. */
const BUILT_IN = new Set(['--help', '--version']);

const registers = await loadCommands();

/** Every command of the CLI by its full name (`bench tick`), with the long flags it takes. */
function cliFlags(): Map<string, Set<string>> {
  const program = new Command('brainstem');
  for (const register of registers) register(program);
  const out = new Map<string, Set<string>>();
  const walk = (cmd: Command, prefix: string): void => {
    for (const sub of cmd.commands) {
      const name = `${prefix}${sub.name()}`;
      out.set(name, new Set(sub.options.map((o) => o.long).filter((f): f is string => f !== undefined && !BUILT_IN.has(f))));
      walk(sub, `${name} `);
    }
  };
  walk(program, '');
  return out;
}

const manual = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
]
  .map((page) => readFileSync(join(repoRoot, page), 'utf8'))
  .join('\n');
const documented = new Set([...manual.matchAll(/(?<![\w-])--[a-z][a-z-]*[a-z]/g)].map((m) => m[0]));

test('every flag of every command is documented', () => {
  const missing: string[] = [];
  for (const [name, flags] of cliFlags()) for (const flag of flags) if (!documented.has(flag)) missing.push(`${name} ${flag}`);
  assert.deepEqual(missing, []);
});

test('every flag the docs mention is one the CLI takes', () => {
  const known = new Set([...cliFlags().values()].flatMap((flags) => [...flags]));
  const unknown = [...documented].filter((flag) => !known.has(flag) && !OTHER_TOOLS_FLAGS.has(flag) && !RUNNER_FLAGS.has(flag) && !BUILT_IN.has(flag));
  assert.deepEqual(unknown, []);
});

test('every command and subcommand has its row in docs/cli.md', () => {
  const rows = readFileSync(join(repoRoot, 'docs', 'cli.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `npx brainstem '))
    // The first code span of a row: the command with its subcommands and flags.
    .map((line) => line.slice(3, line.indexOf('` |')).split(/[\s|\\[\]]+/));
  const missing: string[] = [];
  for (const name of cliFlags().keys()) {
    const [top, ...sub] = name.split(' ');
    if (sub.includes('help')) continue;
    if (!rows.some((words) => words[2] === top && sub.every((word) => words.includes(word)))) missing.push(name);
  }
  assert.deepEqual(missing, []);
});
