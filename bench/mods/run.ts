/**
 * `brainstem bench mods`: what a mod costs the game server's own thread, per character per
 * cadence, in each mod runtime that runs here (Lua 5.4, Mono C#): CPU time to gather the
 * ticks, build the batch, send it to a real sidecar and apply the replies, at several
 * character counts, beside a baseline of the same runtime only encoding the same JSON (the
 * client's encoder, and lua-cjson's C encoder when installed). Lua's sending is LuaSocket,
 * which blocks and pays its socket work on the measured thread (FiveM's and Garry's Mod's HTTP
 * run off the script thread); C#'s figure is the whole process's CPU, HttpClient's threads and
 * the GC included (Unity's UnityWebRequest runs natively off the main thread). Both are upper
 * bounds for the game thread's share.
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
  /** The full path with the module's own Lua decoder. */
  fullUs: number;
  /** The full path with a C decoder injected (lua-cjson, standing for FiveM's json.decode). */
  fullCjsonUs: number | null;
  gatherUs: number;
  encodeUs: number;
  /** Reading the replies alone (the client's own decoder). */
  parseUs: number;
  cjsonUs: number | null;
  applied: number;
  failures: number;
  bodyBytes: number;
}

function exec(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

interface RawRow {
  characters: number;
  rounds: number;
  full_us: number;
  full_cjson_us?: number | null;
  gather_us: number;
  encode_us: number;
  parse_us: number;
  cjson_us?: number | null;
  applied: number;
  failures: number;
  bytes: number;
}

function row(runtime: ModsRow['runtime'], out: RawRow): ModsRow {
  return {
    runtime,
    characters: out.characters,
    rounds: out.rounds,
    fullUs: out.full_us,
    fullCjsonUs: out.full_cjson_us ?? null,
    gatherUs: out.gather_us,
    encodeUs: out.encode_us,
    parseUs: out.parse_us,
    cjsonUs: out.cjson_us ?? null,
    applied: out.applied,
    failures: out.failures,
    bodyBytes: out.bytes,
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

export function formatTable(r: { rows: ModsRow[] }): string {
  const head = 'runtime  chars  full µs/char  full+C decoder  (goal)  gather µs  encode-only µs  parse-only µs  cjson-only µs  applied  failures';
  const lines = r.rows.map((row) =>
    [
      row.runtime.padEnd(7),
      String(row.characters).padStart(5),
      row.fullUs.toFixed(1).padStart(13),
      (row.fullCjsonUs === null ? '-' : row.fullCjsonUs.toFixed(1)).padStart(15),
      `(${GOALS_US[row.runtime]})`.padStart(7),
      row.gatherUs.toFixed(1).padStart(10),
      row.encodeUs.toFixed(1).padStart(15),
      row.parseUs.toFixed(1).padStart(14),
      (row.cjsonUs === null ? '-' : row.cjsonUs.toFixed(1)).padStart(14),
      String(row.applied).padStart(8),
      String(row.failures).padStart(9),
    ].join(' '),
  );
  return [head, ...lines].join('\n');
}
