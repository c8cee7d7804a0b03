import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { startSidecar, type Sidecar } from '../../src/sidecar/service.js';
import { cli, fixtures, repoRoot, tempDir } from '../helpers/paths.js';

export const clientsDir = join(repoRoot, 'clients');
export const driversDir = join(repoRoot, 'test', 'clients', 'drivers');
export const TICKS_FIXTURE = join(fixtures, 'clients', 'ticks.json');
export const REPLIES_FIXTURE = join(fixtures, 'clients', 'replies.json');
export const PERCEPTION_FIXTURE = join(fixtures, 'clients', 'perception.json');
export const MALFORMED_REPLIES_FIXTURE = join(fixtures, 'clients', 'malformed-replies.json');

/** What each malformed-replies case must give: its `expect`, by name. */
export function malformedExpected(): { name: string; got: string }[] {
  const f = JSON.parse(readFileSync(MALFORMED_REPLIES_FIXTURE, 'utf8')) as { cases: { name: string; expect: string }[] };
  return f.cases.map((c) => ({ name: c.name, got: c.expect }));
}
export const TOKEN = 'sidecar-token-for-clients';

export interface TickFixture {
  ticks: Record<string, unknown>[];
}
export interface RepliesFixture {
  agents: number[];
  body: string;
  expected: unknown[];
}

export const ticksFixture = (): TickFixture => JSON.parse(readFileSync(TICKS_FIXTURE, 'utf8')) as TickFixture;
export const repliesFixture = (): RepliesFixture => JSON.parse(readFileSync(REPLIES_FIXTURE, 'utf8')) as RepliesFixture;

/**
 * Null when `command` runs here, else the reason to skip, naming the Debian package that
 * provides it (CI installs them through .ci/run).
 */
export function missingTool(command: string, versionFlag: string, debianPackage: string): string | null {
  const probe = spawnSync(command, [versionFlag], { stdio: 'ignore' });
  if (probe.error === undefined) return null;
  return `${command} is missing (apt-get install ${debianPackage}; CI installs it via .ci/run)`;
}

/**
 * The interpreter `python3` resolves to, asked once: a version manager's shim (pyenv) costs
 * seconds on every start, the interpreter itself a fraction of one.
 */
export async function pythonExecutable(): Promise<string> {
  const r = await run('python3', ['-c', 'import sys; print(sys.executable)']);
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : 'python3';
}

export interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a child process without blocking the event loop: the sidecar under test answers from
 * this same process while the client calls it.
 */
export function run(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const status = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ status, stdout, stderr });
    });
  });
}

/** Parses a child's stdout as JSON, failing with its stderr when it did not succeed. */
export function jsonOf(r: Run): any {
  if (r.status !== 0) throw new Error(`exit ${r.status}\n${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout);
}

/** A real sidecar on port 0 that needs TOKEN. */
export function startTokenSidecar(): Promise<Sidecar> {
  return startSidecar({ host: '127.0.0.1', port: 0, source: new DefaultsSource(), workers: 0, token: TOKEN });
}

/**
 * `brainstem sidecar --bundle bundles/default --token TOKEN --workers 2` as a child process on
 * a free port, its working directory and state file in a temp directory (never in the bundle
 * directory, which belongs to the repository); stop() ends it.
 */
export async function startCliSidecar(): Promise<{ url: string; stop(): Promise<void> }> {
  const cwd = tempDir('brainstem-clients-');
  const args = [
    cli,
    'sidecar',
    '--bundle',
    join(repoRoot, 'bundles', 'default'),
    '--addr',
    '127.0.0.1:0',
    '--token',
    TOKEN,
    '--workers',
    '2',
    '--state',
    join(cwd.path, 'brain-state.json'),
  ];
  const child = spawn(process.execPath, args, { cwd: cwd.path, env: { ...process.env, BRAINSTEM_LOG: 'silent' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const url = /(http:\/\/\S+)/.exec(line)?.[1];
  if (!url) throw new Error(`no URL in the sidecar's first line: ${line}`);
  return {
    url,
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      cwd.dispose();
    },
  };
}

/**
 * What the reference clients must make of the fixture ticks: each tick sent alone to a fresh
 * sidecar through POST /tick, parsed into the clients' normal form (known fields per kind).
 */
export async function repliesOneByOne(ticks: Record<string, unknown>[]): Promise<unknown[]> {
  const sidecar = await startTokenSidecar();
  try {
    const out: unknown[] = [];
    for (const tick of ticks) {
      const res = await fetch(`${sidecar.url}/tick`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(tick),
      });
      const body = (await res.json()) as { agent: number; posture: string; intents: Record<string, unknown>[] };
      if (res.status !== 200) throw new Error(`tick ${res.status}: ${JSON.stringify(body)}`);
      out.push({ agent: body.agent, posture: body.posture, intents: body.intents.map(normalIntent) });
    }
    return out;
  } finally {
    await sidecar.close();
  }
}

/** The fields each intent kind carries in the clients' normal form; unknown kinds keep only kind. */
const INTENT_FIELDS: Record<string, string[]> = {
  MoveTo: ['to', 'speed'],
  Engage: ['target', 'fire'],
  Say: ['text', 'channel', 'line_id'],
  Face: ['yaw_deg'],
  Flee: ['from'],
  Investigate: ['at'],
  Emote: ['name'],
  Idle: ['reason'],
  Logoff: [],
};

function normalIntent(intent: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: intent.kind };
  for (const f of INTENT_FIELDS[String(intent.kind)] ?? []) out[f] = intent[f];
  return out;
}

/**
 * The output a client README promises for its example: the ```text block after "It prints, on
 * its first run against a sidecar:". Tests compare it with a real run on a fresh sidecar.
 */
export function readmeExampleOutput(readme: string): string {
  const text = readFileSync(readme, 'utf8');
  const m = /It prints, on its first run against a sidecar:\n\n```text\n([\s\S]*?)\n```/.exec(text);
  if (!m) throw new Error(`${readme} shows no example output`);
  return m[1]!;
}
