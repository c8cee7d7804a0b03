// Which test files may run several to a process (scripts/run-group.mjs imports them one after
// another, each in a suite named by its file), decided from what each file's source does, not
// from a trial run. A file that starts processes, uses PostgreSQL or a browser, or touches
// anything a process has one of (the environment, process handlers and exit status, globals,
// the module cache, process-wide measures) keeps a process of its own, as does one in
// SLOW_SUITES (a group is meant to be a few seconds of work) or marked with ALONE_MARKER.
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { SLOW_SUITES } from './test-files.mjs';

/** A line in a test file (with the reason after it) that keeps the file in a process of its own. */
export const ALONE_MARKER = '// test-runner: own process';

/**
 * Files in a group: enough to pay node's and node:test's start and the shared modules' loading
 * once for several files, few enough that a group stays far inside the per-file timeout.
 */
export const GROUP_SIZE = 8;

/** What keeps a file alone, looked for in its source and in the test helpers it imports (less `paths` and `children`, below). */
const RULES = [
  [/node:child_process|node:worker_threads|new Worker\(/, 'starts processes or threads'],
  [/helpers\/(postgres|databases|browser|services|replicas)\.js/, 'uses PostgreSQL, Chromium or the shared services'],
  [/process\.env(\.\w+|\[[^\]]+\])\s*(=[^=]|\?\?=|\|\|=)|delete process\.env|process\.env\s*=[^=]/, 'changes process.env'],
  [/process\.(on|once|off|addListener|prependListener|removeListener|removeAllListeners|emit)\(/, 'handles process events'],
  [/process\.(exit|exitCode|kill|abort|chdir|umask|setuid|setgid|title|setUncaughtExceptionCaptureCallback|setSourceMapsEnabled)\b/, 'changes process state'],
  [/uncaughtException|unhandledRejection/, 'tests uncaught errors'],
  [/\bmock\b/, 'mocks (timers, methods)'],
  [/globalThis|\bglobal\.|\.prototype\.\w+\s*=[^=]|Math\.random\s*=|Date\.now\s*=|\bgc\(/, 'changes or reads globals'],
  [/createRequire|require\.cache|moduleLoadList|module\.register|registerHooks/, 'reads the module cache or hooks the loader'],
  [
    /memoryUsage|resourceUsage|cpuUsage|getActiveResourcesInfo|_getActive|getHeapStatistics|eventLoopUtilization|monitorEventLoopDelay/,
    'measures the whole process',
  ],
  [/process\.(stdout|stderr|stdin)|console\.\w+\s*=[^=]/, 'uses the process streams'],
  [
    /setMaxListeners|defaultMaxListeners|setDefaultResultOrder|setServers|globalAgent|setGlobalDispatcher|DEFAULT_(MIN|MAX)_VERSION/,
    'changes a process-wide default',
  ],
  [/process\.argv/, 'reads the command line'],
];

/** The test helpers every file may import: `paths` (temp dirs; its `runCli` and `cli` are looked for in the file) and `children`, whose exit handler a process needs once. */
const SHARED_HELPERS = new Set(['test/helpers/paths.ts', 'test/helpers/children.ts']);
const SPAWN_FROM_PATHS = /import\s*\{[^}]*\b(runCli|cli)\b[^}]*\}\s*from\s*'[^']*helpers\/paths\.js'/;

/** The relative imports of a source under test/ (its helpers), as source paths under ROOT. */
function testImports(root, source, text) {
  const out = [];
  for (const m of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*'(\.[^']+)\.js'|^import\s*'(\.[^']+)\.js'/gm)) {
    const target = relative(root, join(root, dirname(source), m[1] ?? m[2])) + '.ts';
    if (target.startsWith('test/')) out.push(target);
  }
  return out;
}

/** Why the test source FILE (relative to ROOT) needs a process of its own, or null when it may share one. */
export function aloneReason(root, file) {
  if (SLOW_SUITES.includes(file)) return 'one of the slowest suites';
  const text = readFileSync(join(root, file), 'utf8');
  if (text.includes(ALONE_MARKER)) return 'marked';
  if (SPAWN_FROM_PATHS.test(text)) return 'starts the CLI';
  const seen = new Set([file]);
  const queue = [[file, text]];
  while (queue.length > 0) {
    const [source, body] = queue.pop();
    for (const [pattern, reason] of RULES) if (pattern.test(body)) return source === file ? reason : `${reason} (${source})`;
    for (const helper of testImports(root, source, body)) {
      if (seen.has(helper) || SHARED_HELPERS.has(helper)) continue;
      seen.add(helper);
      queue.push([helper, readFileSync(join(root, helper), 'utf8')]);
    }
  }
  return null;
}

/**
 * The run's entries from its compiled FILES (paths under ROOT/dist, in run order): a file that
 * must be alone stays a string where it was; the files that may share go, in their order, into
 * arrays of GROUP_SIZE at most, each placed where its first file was.
 */
export function groupFiles(root, files) {
  const entries = [];
  let open = null;
  for (const compiled of files) {
    const source = relative(root, compiled)
      .replace(/^dist\//, '')
      .replace(/\.js$/, '.ts');
    if (aloneReason(root, source) !== null) {
      entries.push(compiled);
      continue;
    }
    if (open === null || open.length === GROUP_SIZE) {
      open = [];
      entries.push(open);
    }
    open.push(compiled);
  }
  return entries.map((e) => (Array.isArray(e) && e.length === 1 ? e[0] : e));
}
