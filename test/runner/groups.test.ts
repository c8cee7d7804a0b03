import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { runFiles, write } from './group-files.js';

interface FileGroups {
  ALONE_MARKER: string;
  GROUP_SIZE: number;
  aloneReason(root: string, file: string): string | null;
  groupFiles(root: string, files: string[]): (string | string[])[];
}
const load = async () => (await import(pathToFileURL(join(repoRoot, 'scripts', 'file-groups.mjs')).href)) as FileGroups;

// Several test files in one process (scripts/file-groups.mjs chooses them, scripts/run-group.mjs
// runs them, scripts/run-files.mjs starts them as `group:` entries): each file's results and
// failures keep its name, its top-level hooks run for its own tests only (a file that hangs:
// test/runner/group-timeout.test.ts).

test("a group keeps each file's name on its results, a failing file fails the run, and a file's top-level hooks run for its tests alone", async () => {
  const tmp = tempDir();
  try {
    const log = join(tmp.path, 'log');
    const say = (what: string) => `appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(`${what}\n`)})`;
    const hooks = write(
      tmp.path,
      'hooks.test.mjs',
      `before(() => ${say('hooks before')});\nbeforeEach(() => ${say('hooks beforeEach')});\nafter(() => ${say('hooks after')});\n` +
        `test('hooked one', () => ${say('hooked one')});\ntest('hooked two', () => ${say('hooked two')});`,
    );
    const red = write(tmp.path, 'red.test.mjs', `test('goes red', () => { ${say('red')}; throw new Error('red on purpose'); });`);
    const plain = write(tmp.path, 'plain.test.mjs', `await Promise.resolve();\ntest('plain', () => ${say('plain')});`);
    const timings = join(tmp.path, 'times.tsv');
    const r = await runFiles(['1', '60000', timings, `group:${[hooks, red, plain].join(':')}`]);
    assert.equal(r.code, 1, r.stdout);
    // One after another, each file's hooks around its own tests only.
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
      'hooks before',
      'hooks beforeEach',
      'hooked one',
      'hooks beforeEach',
      'hooked two',
      'hooks after',
      'red',
      'plain',
    ]);
    // The failure sits in the suite named by its file, and the failures' list gives the file's own line.
    assert.match(r.stdout, /▶ \S*\/red\.test\.mjs\n +✖ goes red/);
    assert.match(r.stdout, /test at \S*\/red\.test\.mjs:\d+:\d+\n✖ goes red/);
    assert.match(r.stdout, /✔ \S*\/plain\.test\.mjs/);
    // --timings: a line per file of the group, under its compiled path.
    const files = readFileSync(timings, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[1]);
    assert.deepEqual(files, [hooks, red, plain]);
  } finally {
    tmp.dispose();
  }
});

test('files that start processes, change the environment, handle process events, read the module cache or carry the marker keep a process of their own', async () => {
  const { ALONE_MARKER, aloneReason, GROUP_SIZE, groupFiles } = await load();
  const tmp = tempDir();
  try {
    const root = tmp.path;
    mkdirSync(join(root, 'test', 'helpers'), { recursive: true });
    const source = (path: string, text: string) => writeFileSync(join(root, path), text);
    source('test/helpers/paths.ts', "import { execFile } from 'node:child_process';\nexport const x = 1;\n");
    source('test/helpers/exits.ts', "process.on('exit', () => {});\nexport const y = 1;\n");
    source('test/clean.test.ts', "import { x } from './helpers/paths.js';\nimport test from 'node:test';\ntest('t', () => {});\n");
    source('test/spawns.test.ts', "import { spawn } from 'node:child_process';\n");
    source('test/cli.test.ts', "import { runCli } from './helpers/paths.js';\n");
    source('test/env.test.ts', "process.env.BRAINSTEM_LOG = 'info';\n");
    source('test/handler.test.ts', "import { y } from './helpers/exits.js';\n");
    source('test/cache.test.ts', "import { createRequire } from 'node:module';\n");
    source('test/marked.test.ts', `${ALONE_MARKER}: it measures the whole process\n`);
    assert.equal(aloneReason(root, 'test/clean.test.ts'), null);
    assert.equal(aloneReason(root, 'test/spawns.test.ts'), 'starts processes or threads');
    assert.equal(aloneReason(root, 'test/cli.test.ts'), 'starts the CLI');
    assert.equal(aloneReason(root, 'test/env.test.ts'), 'changes process.env');
    assert.equal(aloneReason(root, 'test/handler.test.ts'), 'handles process events (test/helpers/exits.ts)');
    assert.equal(aloneReason(root, 'test/cache.test.ts'), 'reads the module cache or hooks the loader');
    assert.equal(aloneReason(root, 'test/marked.test.ts'), 'marked');
    assert.equal(aloneReason(repoRoot, 'test/video/replicas.test.ts'), 'one of the slowest suites');

    // Groups of GROUP_SIZE at most, each where its first file was; a file alone keeps its place.
    const clean = Array.from({ length: GROUP_SIZE + 2 }, (_, i) => {
      source(`test/c${i}.test.ts`, "import test from 'node:test';\n");
      return join(root, 'dist', 'test', `c${i}.test.js`);
    });
    const alone = join(root, 'dist', 'test', 'env.test.js');
    assert.deepEqual(groupFiles(root, [clean[0]!, alone, ...clean.slice(1)]), [clean.slice(0, GROUP_SIZE), alone, clean.slice(GROUP_SIZE)]);
    assert.deepEqual(groupFiles(root, [clean[0]!, alone]), [clean[0], alone], 'a group of one is a file alone');
  } finally {
    tmp.dispose();
  }
});

test("run-tests.mjs --cpu gives a grouped file its own row and the group's process a row for the rest; with --alone each file runs alone", async () => {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, [join(repoRoot, 'scripts', 'run-tests.mjs'), ...args], { encoding: 'utf8', env, maxBuffer: 16 << 20 }, (err, stdout) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout });
      });
    });
  const files = ['test/http/limits.test', 'test/http/errors.test'];
  const grouped = await run(['--cpu', ...files]);
  assert.equal(grouped.code, 0, grouped.stdout);
  assert.match(grouped.stdout, /the most first: 2 files/);
  assert.match(grouped.stdout, /^ +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d  test\/http\/limits\.test\.ts$/m);
  assert.match(grouped.stdout, /^ +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d  test\/http\/errors\.test\.ts$/m);
  assert.match(grouped.stdout, /^ +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d  \(a group's process: its start and what its 2 files did not\)$/m);
  const alone = await run(['--alone', '--cpu', ...files]);
  assert.equal(alone.code, 0, alone.stdout);
  assert.match(alone.stdout, /the most first: 2 files/);
  assert.doesNotMatch(alone.stdout, /a group's process/);
});
