import type { Command } from 'commander';
import { FORMAT_NAMES, type Format } from '../../video/types.js';
import { tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, parseInteger, printJson, replicaBenchFlags, replicaCpuFlag } from '../util.js';

interface Flags {
  photos: string;
  format: string;
  seconds: string;
  connections: string;
  load: string;
  repeat: string;
  memoryPhotos: string;
  json?: boolean;
  database?: string;
  workers: string;
  renders: string;
  replicaCpu: string;
  objectStore?: string;
}

/** `brainstem bench video`: render time of a tour against its duration, and API request rate against a baseline. */
export function registerBenchVideo(bench: Command): void {
  bench
    .command('video')
    .description(
      'render a 1080p tour with captions, branding, voice and music, and the three-format pack, each against the bare encoder in the same run; the peak memory of a 100-photo tour; GET /v1/properties req/s against a bare server',
    )
    .option('--photos <n>', 'photos in the tour', '10')
    .option('--format <ratio>', `video format (${FORMAT_NAMES.join(', ')})`, '16:9')
    .option('--repeat <n>', 'paired bare-encoder / render measurements, back to back (the machine may be shared)', '3')
    .option('--memory-photos <n>', 'photos of the memory run under the default address-space limit', '100')
    .option('--seconds <n>', 'seconds per request-rate measurement', '5')
    .option('--connections <n>', 'concurrent connections', '32')
    .option('--load <tool>', 'load generator: wrk (/usr/bin/wrk, falls back to inproc when absent) or inproc', 'wrk')
    .option(
      '--database <url>',
      'instead: renders per minute with --workers render workers (serve --role worker) on this PostgreSQL (a role that may create databases), beside one API process',
    )
    .option('--workers <list>', 'with --database: worker counts to run, comma-separated; the scaling factor is the last ÷ the first', '1,2')
    .option('--renders <n>', 'with --database: renders queued at once per worker count', '4')
    .option(
      '--replica-cpu <cores>',
      'with --database: each worker (with its ffmpeg) in a CPU cgroup of its own with this share of a core, made and removed by the bench (root); "none" for no quotas',
      '0.5',
    )
    .option(
      '--object-store <url>',
      'with --database: photos and videos in S3-compatible storage, s3://bucket/prefix (AWS_* environment); default one shared data directory',
    )
    .option('--json', 'print only JSON')
    .action(async (flags: Flags) => {
      if (!FORMAT_NAMES.includes(flags.format as Format)) throw new CliError(`--format must be one of ${FORMAT_NAMES.join(', ')}, got "${flags.format}"`);
      if (flags.database !== undefined) return workerBench(flags);
      if (flags.load !== 'wrk' && flags.load !== 'inproc') throw new CliError(`--load must be wrk or inproc, got "${flags.load}"`);
      const { runVideoBench, table } = await import('../../../bench/video/run.js');
      const workDir = mkdtempSync(join(tmpdir(), 'brainstem-bench-video-'));
      try {
        const result = await runVideoBench({
          photos: parseInteger(flags.photos, '--photos', 1, 100),
          format: flags.format as Format,
          repeat: parseInteger(flags.repeat, '--repeat', 1, 20),
          memoryPhotos: parseInteger(flags.memoryPhotos, '--memory-photos', 1, 100),
          seconds: parseInteger(flags.seconds, '--seconds', 1, 600),
          connections: parseInteger(flags.connections, '--connections', 1, 1000),
          load: flags.load,
          workDir,
          log: flags.json ? () => {} : (line) => process.stderr.write(`${line}\n`),
        });
        if (!flags.json) process.stdout.write(`${table(result)}\n\n`);
        printJson(result);
      } finally {
        rmSync(workDir, { recursive: true, force: true });
      }
    });
}

async function workerBench(flags: Flags): Promise<void> {
  const { url, replicas: workers } = replicaBenchFlags(flags.database!, flags.workers, '--workers');
  const { runWorkerBench, workersTable } = await import('../../../bench/video/workers.js');
  const result = await runWorkerBench({
    database: url,
    workers,
    renders: parseInteger(flags.renders, '--renders', 1, 1000),
    photos: parseInteger(flags.photos, '--photos', 1, 100),
    format: flags.format as Format,
    objectStore: flags.objectStore ?? null,
    replicaCpu: replicaCpuFlag(flags.replicaCpu),
    log: (line) => {
      if (!flags.json) process.stderr.write(`bench video: ${line}\n`);
    },
  }).catch((err: Error) => {
    throw new CliError(`bench video failed: ${err.message}`);
  });
  printJson(result);
  if (!flags.json) process.stdout.write(`\n${workersTable(result)}\n`);
}
