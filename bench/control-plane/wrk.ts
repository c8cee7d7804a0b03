import { spawn } from 'node:child_process';

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with a status outside 2xx/3xx. */
  errors: number;
  socketErrors: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function ms(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : NaN;
}

/** Parses wrk's text report (run with --latency). */
export function parseWrk(out: string): WrkResult {
  const num = (re: RegExp): number => Number(re.exec(out)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const total = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
  return {
    requests: total ? Number(total[1]) : NaN,
    seconds: total ? ms(`${total[2]}${total[3]}`) / 1000 : NaN,
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: ms(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99Ms: ms(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    errors: /Non-2xx or 3xx responses: (\d+)/.test(out) ? num(/Non-2xx or 3xx responses: (\d+)/) : 0,
    socketErrors: socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

export interface WrkRun {
  url: string;
  script: string;
  args: string[];
  threads: number;
  connections: number;
  durationS: number;
  /** CPU list for taskset, e.g. "1". */
  cpu: string | undefined;
}

/** Runs wrk (pinned with taskset when a cpu is given) and parses its report. */
export function runWrk(r: WrkRun): Promise<WrkResult & { raw: string }> {
  const wrkArgs = ['-t', String(r.threads), '-c', String(r.connections), '-d', `${r.durationS}s`, '--latency', '-s', r.script, r.url, '--', ...r.args];
  const [cmd, args] = r.cpu ? ['taskset', ['-c', r.cpu, 'wrk', ...wrkArgs]] : ['wrk', wrkArgs];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`wrk exited ${code}: ${err || out}`));
      else resolve({ ...parseWrk(out), raw: out });
    });
  });
}
