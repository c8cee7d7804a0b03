/**
 * Peak memory of the embedded server under a flood of JSON photo uploads, with the JSON
 * upload budget at its default and, as the baseline in the same run, with no budget (the
 * 25 MiB cap alone), plus how long an unrelated request waits meanwhile.
 *
 *   node dist/bench/video/json-memory.js [--uploads 64] [--mib 25]
 *
 * The server runs in a child process (this file with `--serve BUDGET`), so its peak RSS
 * (VmHWM) is its own and not the client's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbedded } from '../../src/embedded/start.js';
import { ByteBudget } from '../../src/http/byte-budget.js';
import { JSON_UPLOAD_BUDGET_BYTES } from '../../src/video/index.js';
import { ADMIN, apiKey, call } from './run.js';

interface Run {
  budget: string;
  uploads: number;
  created: number;
  refused503: number;
  /** Any other answers, by status (0: the request failed without one). */
  other: number[];
  peakRssMiB: number;
  unrelatedGetMs: number;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

async function serve(budget: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-json-memory-'));
  const e = await startEmbedded({
    port: 0,
    db: join(dir, 'b.db'),
    dataDir: join(dir, 'data'),
    adminToken: ADMIN,
    ffmpegPath: '/nonexistent/ffmpeg',
    limits: { apiKey: { limit: 1e9, windowMs: 60_000 }, tenantApiKeys: { limit: 1e9, windowMs: 60_000 } },
    video: { jsonUploadBudget: new ByteBudget(budget) },
  });
  process.stdout.write(`${e.url}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void e.close().then(() => rmSync(dir, { recursive: true, force: true })));
}

function smallJpeg(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-json-memory-photo-'));
  try {
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=1', '-frames:v', '1', join(dir, 'p.jpg')]);
    return readFileSync(join(dir, 'p.jpg'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
}

async function measure(label: string, budget: number, uploads: number, bytes: number): Promise<Run> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', String(budget)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BRAINSTEM_LOG: 'silent' },
  });
  const url = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  try {
    const e = { url };
    const key = await apiKey(e);
    const pid = (await call(e, 'POST', '/v1/properties', key, { title: 'Bench', address: '1 Memory Lane' })).id;
    const photo = smallJpeg();
    const core = Buffer.from(JSON.stringify({ photos: [{ data_base64: photo.toString('base64') }] }));
    const body = Buffer.concat([core, Buffer.alloc(bytes - core.length, 0x20)]);
    const statuses = Promise.all(
      Array.from({ length: uploads }, () =>
        fetch(`${url}/v1/properties/${pid}/photos`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        }).then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        ),
      ),
    );
    const t0 = performance.now();
    await call(e, 'GET', '/v1/properties', key);
    const unrelatedGetMs = Math.round(performance.now() - t0);
    const done = await statuses;
    return {
      budget: label,
      uploads,
      created: done.filter((s) => s === 201).length,
      refused503: done.filter((s) => s === 503).length,
      other: done.filter((s) => s !== 201 && s !== 503),
      peakRssMiB: peakRssMiB(child.pid!),
      unrelatedGetMs,
    };
  } finally {
    child.stdin!.end();
    await new Promise((r) => child.once('exit', r));
  }
}

async function main(): Promise<void> {
  const serveAt = process.argv.indexOf('--serve');
  if (serveAt >= 0) return serve(Number(process.argv[serveAt + 1]));
  const uploads = arg('--uploads', 64);
  const bytes = arg('--mib', 25) * 1024 * 1024;
  const runs = [
    await measure('none (baseline: the 25 MiB cap alone)', Number.MAX_SAFE_INTEGER, uploads, bytes),
    await measure(`${JSON_UPLOAD_BUDGET_BYTES / 1024 / 1024} MiB (default)`, JSON_UPLOAD_BUDGET_BYTES, uploads, bytes),
  ];
  process.stdout.write(`${JSON.stringify(runs)}\n`);
  process.stdout.write('| budget | uploads | 201 | 503 | other | server peak RSS | unrelated GET |\n|---|---|---|---|---|---|---|\n');
  for (const r of runs)
    process.stdout.write(
      `| ${r.budget} | ${r.uploads} | ${r.created} | ${r.refused503} | ${r.other.join(' ') || '-'} | ${r.peakRssMiB} MiB | ${r.unrelatedGetMs} ms |\n`,
    );
}

await main();
