/**
 * `brainstem bench mods`: what a mod costs the game server's own thread, per character per
 * cadence, in each mod runtime that runs here (Lua 5.4): CPU time to gather the ticks, build
 * the batch, send it to a real sidecar and apply the replies, at several character counts,
 * beside a baseline of the same runtime only encoding the same JSON (the client's encoder,
 * and lua-cjson's C encoder when installed). The sending here is LuaSocket, which blocks and
 * pays its socket work on the measured thread; FiveM's and Garry's Mod's HTTP run off the
 * script thread, so the figure is an upper bound for them.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { startSidecar } from '../../src/sidecar/service.js';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const TOKEN = 'bench-mods-token';
/** The goal per character per cadence, µs of the game thread's CPU, by runtime. */
export const GOALS_US = { lua: 20 } as const;

export interface ModsRow {
  runtime: 'lua';
  characters: number;
  rounds: number;
  /** The full path with the module's own Lua decoder. */
  fullUs: number;
  /** The full path with a C decoder injected (lua-cjson, standing for FiveM's json.decode). */
  fullCjsonUs: number | null;
  gatherUs: number;
  encodeUs: number;
  cjsonUs: number | null;
  applied: number;
  failures: number;
  bodyBytes: number;
}

function lua(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('lua5.4', args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

export async function runModsBench(opts: { characters: number[]; rounds: number }): Promise<{ rows: ModsRow[]; goalsUs: typeof GOALS_US }> {
  const sidecar = await startSidecar({ host: '127.0.0.1', port: 0, source: new DefaultsSource(), workers: 0, token: TOKEN });
  try {
    const rows: ModsRow[] = [];
    for (const n of opts.characters) {
      const out = JSON.parse(
        await lua([join(repoRoot, 'bench', 'mods', 'mod.lua'), join(repoRoot, 'clients', 'lua'), sidecar.url, TOKEN, String(n), String(opts.rounds)]),
      ) as {
        characters: number;
        rounds: number;
        full_us: number;
        full_cjson_us: number | null;
        gather_us: number;
        encode_us: number;
        cjson_us: number | null;
        applied: number;
        failures: number;
        bytes: number;
      };
      rows.push({
        runtime: 'lua',
        characters: out.characters,
        rounds: out.rounds,
        fullUs: out.full_us,
        fullCjsonUs: out.full_cjson_us,
        gatherUs: out.gather_us,
        encodeUs: out.encode_us,
        cjsonUs: out.cjson_us,
        applied: out.applied,
        failures: out.failures,
        bodyBytes: out.bytes,
      });
    }
    return { rows, goalsUs: GOALS_US };
  } finally {
    await sidecar.close();
  }
}

export function formatTable(r: { rows: ModsRow[] }): string {
  const head = 'runtime  chars  full µs/char  full+C decoder  (goal)  gather µs  encode-only µs  cjson-only µs  applied  failures';
  const lines = r.rows.map((row) =>
    [
      row.runtime.padEnd(7),
      String(row.characters).padStart(5),
      row.fullUs.toFixed(1).padStart(13),
      (row.fullCjsonUs === null ? '-' : row.fullCjsonUs.toFixed(1)).padStart(15),
      `(${GOALS_US[row.runtime]})`.padStart(7),
      row.gatherUs.toFixed(1).padStart(10),
      row.encodeUs.toFixed(1).padStart(15),
      (row.cjsonUs === null ? '-' : row.cjsonUs.toFixed(1)).padStart(14),
      String(row.applied).padStart(8),
      String(row.failures).padStart(9),
    ].join(' '),
  );
  return [head, ...lines].join('\n');
}
