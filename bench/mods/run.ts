/**
 * `brainstem bench mods`: what a mod costs the game server's own thread, per character per
 * cadence, in each mod runtime that runs here (Lua 5.4, Mono C#), against a real sidecar, at
 * several character counts.
 *
 * "Game thread" counts what the engine's script or main thread runs: gather the ticks, build
 * the batch, hand it to the engine's HTTP function (Lua: the module's FiveM adapter over a
 * PerformHttpRequest that queues; C#: BrainLoop over an IBatchTransport that queues, as
 * UnityWebRequest takes it), then, in the callback, read the replies and apply them. The HTTP
 * exchange between the two runs on the engine's own threads in FiveM, Garry's Mod and Unity,
 * so it is not counted; its CPU is reported beside ("transport": a keep-alive LuaSocket
 * connection for Lua, HttpClient with every thread of the process for C#). Lua's clock is the
 * process's (one thread), C#'s the calling thread's.
 *
 * Baselines of the same runtime in the same run: the client's encoder alone on the same ticks,
 * lua-cjson's C encoder and decoder alone (the stand-in for FiveM's json.encode/decode and
 * Garry's Mod's util.TableToJSON/JSONToTable, the cost a native codec puts on the thread),
 * and the client's reply reader alone on the same replies.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { startSidecar } from '../../src/sidecar/service.js';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const TOKEN = 'bench-mods-token';
/** The goal per character per cadence, µs of the game thread's CPU, by runtime. */
export const GOALS_US = { lua: 20, csharp: 5 } as const;

export interface ModsRow {
  runtime: 'lua' | 'csharp';
  characters: number;
  rounds: number;
  /** The game thread with the client's own decoder. */
  gameUs: number;
  /** The game thread with lua-cjson's decoder injected (as the kits inject the engine's). */
  gameCjsonUs: number | null;
  /** The HTTP exchange, off the game thread in the engines (not in gameUs). */
  transportUs: number;
  gatherUs: number;
  /** The client's encoder alone (the baseline). */
  encodeUs: number;
  cjsonEncodeUs: number | null;
  /** Reading the replies alone with the client's decoder. */
  parseUs: number;
  /** Reading the replies alone with lua-cjson's decoder injected. */
  parseCjsonUs: number | null;
  cjsonDecodeUs: number | null;
  applied: number;
  failures: number;
  bodyBytes: number;
  replyBytes: number;
}

function exec(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

interface RawRow {
  characters: number;
  rounds: number;
  game_us: number;
  game_cjson_us?: number | null;
  transport_us: number;
  gather_us: number;
  encode_us: number;
  cjson_encode_us?: number | null;
  parse_us: number;
  parse_cjson_us?: number | null;
  cjson_decode_us?: number | null;
  applied: number;
  failures: number;
  bytes: number;
  reply_bytes: number;
}

function row(runtime: ModsRow['runtime'], out: RawRow): ModsRow {
  return {
    runtime,
    characters: out.characters,
    rounds: out.rounds,
    gameUs: out.game_us,
    gameCjsonUs: out.game_cjson_us ?? null,
    transportUs: out.transport_us,
    gatherUs: out.gather_us,
    encodeUs: out.encode_us,
    cjsonEncodeUs: out.cjson_encode_us ?? null,
    parseUs: out.parse_us,
    parseCjsonUs: out.parse_cjson_us ?? null,
    cjsonDecodeUs: out.cjson_decode_us ?? null,
    applied: out.applied,
    failures: out.failures,
    bodyBytes: out.bytes,
    replyBytes: out.reply_bytes,
  };
}

/**
 * Runs every runtime at every character count. `ticks` is the number of character-cadences
 * measured per count (rounds = ticks / characters), so each figure rests on the same work.
 */
export async function runModsBench(opts: { characters: number[]; ticks: number; csharp: boolean }): Promise<{ rows: ModsRow[]; goalsUs: typeof GOALS_US }> {
  const sidecar = await startSidecar({ host: '127.0.0.1', port: 0, source: new DefaultsSource(), workers: 0, token: TOKEN });
  const build = mkdtempSync(join(tmpdir(), 'brainstem-bench-mods-'));
  try {
    const rows: ModsRow[] = [];
    for (const n of opts.characters) {
      const rounds = String(Math.max(1, Math.ceil(opts.ticks / n)));
      const out = await exec('lua5.4', [join(repoRoot, 'bench', 'mods', 'mod.lua'), join(repoRoot, 'clients', 'lua'), sidecar.url, TOKEN, String(n), rounds]);
      rows.push(row('lua', JSON.parse(out) as RawRow));
    }
    if (opts.csharp) {
      const exe = join(build, 'modbench.exe');
      await exec('mcs', [
        '-langversion:6',
        '-r:System.Net.Http',
        `-out:${exe}`,
        join(repoRoot, 'clients', 'csharp', 'Brainstem.cs'),
        join(repoRoot, 'bench', 'mods', 'ModBench.cs'),
      ]);
      for (const n of opts.characters) {
        const rounds = String(Math.max(1, Math.ceil(opts.ticks / n)));
        rows.push(row('csharp', JSON.parse(await exec('mono', [exe, sidecar.url, TOKEN, String(n), rounds])) as RawRow));
      }
    }
    return { rows, goalsUs: GOALS_US };
  } finally {
    rmSync(build, { recursive: true, force: true });
    await sidecar.close();
  }
}

const dash = (v: number | null, width: number): string => (v === null ? '-' : v.toFixed(1)).padStart(width);

export function formatTable(r: { rows: ModsRow[] }): string {
  const head = 'runtime  chars  game thread µs/char  +C decoder  (goal)  transport*  gather  encode  C encode  parse  parse C  C decode  applied  failures';
  const lines = r.rows.map((row) =>
    [
      row.runtime.padEnd(7),
      String(row.characters).padStart(5),
      row.gameUs.toFixed(1).padStart(20),
      dash(row.gameCjsonUs, 11),
      `(${GOALS_US[row.runtime]})`.padStart(7),
      row.transportUs.toFixed(1).padStart(11),
      row.gatherUs.toFixed(1).padStart(7),
      row.encodeUs.toFixed(1).padStart(7),
      dash(row.cjsonEncodeUs, 9),
      row.parseUs.toFixed(1).padStart(6),
      dash(row.parseCjsonUs, 8),
      dash(row.cjsonDecodeUs, 9),
      String(row.applied).padStart(8),
      String(row.failures).padStart(9),
    ].join(' '),
  );
  return [
    head,
    ...lines,
    '',
    'CPU µs per character per cadence. Game thread: gather, build, hand to the HTTP function, then read and apply the replies',
    "(Lua: the FiveM adapter, os.clock; C#: BrainLoop over a UnityWebRequest-like transport, the main thread's CPU).",
    '* transport: the HTTP exchange, run off the game thread by PerformHttpRequest, HTTP{} and UnityWebRequest, not counted above',
    "(Lua: LuaSocket keep-alive; C#: HttpClient, the whole process). Baselines: encode = the client's encoder alone,",
    "C encode / C decode = lua-cjson alone (the engines' native JSON), parse = the client's reply reader alone.",
  ].join('\n');
}
