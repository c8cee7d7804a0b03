// The CPU of a PostgreSQL server on this machine, for the benches that measure what the outbox costs it.
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';

/** The options both PostgreSQL outbox benches take: the build to load, the server, and the work's size. */
export const PG_BENCH_OPTIONS = {
  tree: { type: 'string', default: '.' },
  database: { type: 'string' },
  endpoints: { type: 'string', default: '8' },
  deliveries: { type: 'string', default: '8000' },
} as const;

/**
 * A fresh database named `prefix`_pid_time on the server of `serverUrl` (whose role may create
 * databases), its URL, the postmaster's pid (from the server's data directory) and a drop for the end.
 */
export async function freshDatabase(serverUrl: string, prefix: string): Promise<{ url: string; postmaster: number; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const dataDir = (await admin.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'")).rows[0]!.setting;
  const postmaster = Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    postmaster,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** CPU ms of the server: the postmaster and every process it started (backends, WAL writer, checkpointer …). */
export function serverCpuMs(postmaster: number): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    if (pid !== postmaster && Number(f[1]) !== postmaster) continue;
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}
