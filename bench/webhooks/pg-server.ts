// The CPU of a PostgreSQL server on this machine, for the benches that measure what the outbox costs it.
import { readFileSync, readdirSync } from 'node:fs';
import type pg from 'pg';

/** The postmaster's pid of the server `admin` is connected to (read from its data directory). */
export async function postmasterPid(admin: pg.Client): Promise<number> {
  const dataDir = (await admin.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'")).rows[0]!.setting;
  return Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
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
