import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { cli } from '../helpers/paths.js';

export const ADMIN = 'bsa_stack_test_admin';

export interface Child {
  child: ChildProcess;
  /** stdout lines so far. */
  lines: string[];
  stderr: string[];
}

/** Spawns `bin/brainstem ...args` and resolves once stdout has a line matching `ready`. */
export async function spawnCli(
  args: string[],
  ready: RegExp,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Child & { match: RegExpExecArray }> {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      BRAINSTEM_LOG: 'warn',
      SERVICE_BRAIN_TOKEN: '',
      SERVICE_LLM_BASE_URL: '',
      SERVICE_LLM_MODEL: '',
      SERVICE_ADMIN_TOKEN: ADMIN,
      ...options.env,
    },
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => stderr.push(l));
  const rl = createInterface({ input: child.stdout! });
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    rl.on('line', (line) => {
      lines.push(line);
      const m = ready.exec(line);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`brainstem ${args[0]} exited (${code}) before it was ready:\n${lines.join('\n')}\n${stderr.join('\n')}`)));
  });
  return { child, lines, stderr, match };
}

/** SIGTERM (or the given signal) and wait for the exit code. */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill(signal);
  return ((await exited) as [number | null])[0];
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** Polls `probe` until it returns a value that is not undefined (or the deadline passes: the last value is shown). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}${last ? ` (last: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A tick for `agent`; a hostile player in sight when `player` is given. */
export function tick(agent: number, player?: number): Record<string, unknown> {
  return {
    snapshot: {
      agent,
      time_s: 5,
      self_state: { pos: { x: 0, y: 0, z: 0 }, heading_deg: 0, health: 100, blood: 5000, hunger: 10, thirst: 10, has_weapon: true, ammo: 30 },
      targets: player === undefined ? [] : [{ id: player, kind: 'player', pos: { x: 20, y: 0, z: 5 }, hostile: true, visible: true }],
    },
    profile: { name: `Bot ${agent}`, role: 'survivor' },
  };
}

/**
 * A TCP relay on a fixed local port to a backend that may move: the sidecar is pointed at
 * the relay, so the control plane can be killed and started again on a fresh port (a killed
 * server's port stays in TIME_WAIT, which uWS will not bind over). While `backend` is null
 * or down, connections are cut, as with a dead control plane.
 */
export async function relay(): Promise<{ url: string; backend: string | null; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = {
    url: '',
    backend: null as string | null,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (!state.backend) return void client.destroy();
    const target = new URL(state.backend);
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
