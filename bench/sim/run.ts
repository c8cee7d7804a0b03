import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BUNDLE, validateBundle } from '../../brain/bundle.js';
import { isObj } from '../../brain/json.js';
import type { ConfigBundle } from '../../brain/types.js';
import { checkScenario, type Scenario } from './scenario.js';
import { Simulation, type RecordLine, type SimOptions, type SimResult, type TickTransport } from './engine.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** How long a spawned sidecar may take to answer /health: seconds on a quiet machine, much longer on a loaded one (a tight wait failed scenarios there). */
const SIDECAR_START_MS = 60_000;

export function loadScenario(file: string): Scenario {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read scenario ${file}: ${(err as Error).message}`);
  }
  const issues = checkScenario(value);
  // The merged bundle is checked here too, so its problems come with the others rather than
  // one at a time from a sidecar that refuses to start.
  const bundle = value !== null && typeof value === 'object' ? (value as { bundle?: unknown }).bundle : undefined;
  if (bundle !== null && typeof bundle === 'object' && !Array.isArray(bundle)) {
    const check = validateBundle(scenarioBundle(value as Scenario));
    if (!check.ok) for (const p of check.problems) issues.push(`bundle.${p.path}: ${p.message}`);
  }
  if (issues.length) throw new Error(`scenario ${file} is invalid (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${issues.join('; ')}`);
  return value as Scenario;
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (!isObj(base) || !isObj(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/** The scenario's bundle: its partial overrides merged over the documented default. */
export function scenarioBundle(scenario: Scenario): ConfigBundle {
  return deepMerge(structuredClone(DEFAULT_BUNDLE), scenario.bundle ?? {}) as ConfigBundle;
}

/** A keep-alive HTTP transport to a sidecar's /tick; `explain`: every reply carries `why` (`?explain=1`). */
export function httpTransport(baseUrl: string, token?: string, explain = false): TickTransport & { close(): void } {
  const url = new URL(explain ? '/tick?explain=1' : '/tick', baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (body: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return Object.assign(send, { close: () => agent.destroy() });
}

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, 'close');
  return port;
}

export interface SidecarProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `brainstem sidecar` as a child process on a bundle and waits until /health answers. */
export async function spawnSidecar(bundle: ConfigBundle, extraArgs: string[] = []): Promise<SidecarProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-sim-'));
  mkdirSync(join(dir, 'bundle'));
  writeFileSync(join(dir, 'bundle', 'bundle.json'), JSON.stringify(bundle));
  const port = await freePort();
  // The brain memory file goes in the scratch directory too: each simulated sidecar starts
  // fresh and leaves nothing in the working directory.
  const state = ['--state', join(dir, 'brain-state.json')];
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'bin', 'brainstem'), 'sidecar', '--bundle', join(dir, 'bundle'), '--addr', `127.0.0.1:${port}`, ...state, ...extraArgs],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SERVICE_BRAIN_TOKEN: '', BRAINSTEM_LOG: process.env.BRAINSTEM_LOG ?? 'error' },
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.resume();
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + SIDECAR_START_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sidecar exited with ${child.exitCode}: ${stderr.trim()}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`sidecar did not answer /health within ${SIDECAR_START_MS / 1000} s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunOptions {
  /** An already running sidecar; without it one is spawned on the scenario's bundle. */
  sidecarUrl?: string;
  token?: string;
  /** Writes every tick and reply (each with its `why`) as JSON lines (first line: the scenario and its bundle). */
  recordFile?: string;
  workers?: number;
  /** Called after every step with every character (see `--html`). */
  onFrame?: SimOptions['onFrame'];
  /** The spawned sidecar's characters talk from the scripted demo line source (`--demo-dialogue`). */
  demoDialogue?: boolean;
  /** Called after every step (see SimOptions.onStep). */
  onStep?: SimOptions['onStep'];
}

export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<SimResult> {
  const bundle = scenarioBundle(scenario);
  if (options.demoDialogue && options.sidecarUrl)
    throw new Error('--demo-dialogue applies to the sidecar sim starts; start your own with brainstem sidecar --demo-dialogue instead');
  const args = [...(options.workers === undefined ? [] : ['--workers', String(options.workers)]), ...(options.demoDialogue ? ['--demo-dialogue'] : [])];
  const sidecar = options.sidecarUrl ? null : await spawnSidecar(bundle, args);
  // Every reply of a run explains itself, for the record and the replay page.
  const transport = httpTransport(options.sidecarUrl ?? sidecar!.url, options.token, true);
  const out = options.recordFile ? createWriteStream(options.recordFile) : null;
  // A recording made with demo dialogue says so, so that replay starts its sidecar the same way;
  // `explain` tells replay to ask for the same explanations it recorded.
  out?.write(`${JSON.stringify({ scenario: scenario.name, bundle, explain: true, ...(options.demoDialogue ? { demoDialogue: true } : {}) })}\n`);
  try {
    const sim = new Simulation(scenario, transport, out ? (line: RecordLine) => out.write(`${JSON.stringify(line)}\n`) : undefined, {
      ...(options.onFrame ? { onFrame: options.onFrame } : {}),
      ...(options.onStep ? { onStep: options.onStep } : {}),
    });
    return await sim.run();
  } finally {
    transport.close();
    if (out) {
      out.end();
      await once(out, 'close');
    }
    await sidecar?.stop();
  }
}

export interface ReplayResult {
  ticks: number;
  mismatches: { line: number; t: number; expected: string; actual: string }[];
}

/** Re-sends every recorded tick, in order, to a fresh sidecar on the recorded bundle and compares replies byte for byte. */
export async function replay(
  recordFile: string,
  options: { sidecarUrl?: string; workers?: number; maxMismatches?: number; onTick?: (done: number, total: number) => void } = {},
): Promise<ReplayResult> {
  let text: string;
  try {
    text = readFileSync(recordFile, 'utf8');
  } catch (err) {
    throw new Error(`cannot read recording ${recordFile}: ${(err as Error).message}`);
  }
  const lines = text.split('\n').filter(Boolean);
  if (lines.length === 0) throw new Error(`${recordFile} is empty`);
  const lineOf = <T>(i: number): T => {
    try {
      return JSON.parse(lines[i]!) as T;
    } catch {
      throw new Error(`${recordFile}: line ${i + 1} is not valid JSON; was it written by brainstem sim --record?`);
    }
  };
  const header = lineOf<{ scenario?: string; bundle?: ConfigBundle; demoDialogue?: boolean; explain?: boolean } | null>(0);
  if (header === null || typeof header !== 'object' || !header.bundle)
    throw new Error(`${recordFile} has no header line with the bundle; was it written by brainstem sim --record?`);
  // Every line read before a sidecar is started: a bad one is reported at once, naming it.
  const records = lines.slice(1).map((_, k) => lineOf<RecordLine>(k + 1));
  const args = [...(options.workers === undefined ? [] : ['--workers', String(options.workers)]), ...(header.demoDialogue === true ? ['--demo-dialogue'] : [])];
  const sidecar = options.sidecarUrl ? null : await spawnSidecar(header.bundle, args);
  // A recording from before replies explained themselves replays without explanations.
  const transport = httpTransport(options.sidecarUrl ?? sidecar!.url, undefined, header.explain === true);
  const mismatches: ReplayResult['mismatches'] = [];
  try {
    for (let i = 1; i < lines.length; i++) {
      const rec = records[i - 1]!;
      const res = await transport(rec.request);
      options.onTick?.(i, lines.length - 1);
      if (res.body !== rec.reply || res.status !== rec.status) {
        mismatches.push({ line: i + 1, t: rec.t, expected: rec.reply, actual: res.body });
        if (mismatches.length >= (options.maxMismatches ?? 20)) break;
      }
    }
  } finally {
    transport.close();
    await sidecar?.stop();
  }
  return { ticks: lines.length - 1, mismatches };
}
