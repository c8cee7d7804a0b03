import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

export type FfmpegSource = 'FFMPEG_PATH' | 'option' | 'PATH' | '@ffmpeg-installer/ffmpeg';

export interface FfmpegBinary {
  path: string;
  source: FfmpegSource;
  /** Whether the build has the xfade filter (ffmpeg 4.3+); older builds cross-fade through black instead. */
  xfade: boolean;
  /** Whether the build has drawtext (needs libfreetype). */
  drawtext: boolean;
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function fromPackage(): string | null {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require('@ffmpeg-installer/ffmpeg') as { path?: string };
    return pkg.path && existsSync(pkg.path) ? pkg.path : null;
  } catch {
    return null;
  }
}

/**
 * Finds ffmpeg: an explicit option, else FFMPEG_PATH, else `ffmpeg` on PATH, else the binary
 * of the @ffmpeg-installer/ffmpeg package (an old static build without xfade). Throws with
 * the fix when none exists.
 */
export function resolveFfmpeg(explicit?: string): FfmpegBinary {
  let found: { path: string; source: FfmpegSource } | null = null;
  if (explicit) found = { path: explicit, source: 'option' };
  else if (process.env.FFMPEG_PATH) found = { path: process.env.FFMPEG_PATH, source: 'FFMPEG_PATH' };
  else {
    const p = onPath(process.platform === 'win32' ? 'ffmpeg.exe' : 'ffmpeg');
    if (p) found = { path: p, source: 'PATH' };
    else {
      const pkg = fromPackage();
      if (pkg) found = { path: pkg, source: '@ffmpeg-installer/ffmpeg' };
    }
  }
  if (!found) throw new Error('ffmpeg not found: set FFMPEG_PATH, install ffmpeg on PATH, or install @ffmpeg-installer/ffmpeg');
  const cached = probed.get(found.path);
  if (cached) return { ...cached, source: found.source };
  const probe = spawnSync(found.path, ['-hide_banner', '-filters'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.status !== 0) throw new Error(`ffmpeg at ${found.path} (from ${found.source}) does not run: ${probe.error?.message ?? probe.stderr.slice(0, 200)}`);
  const bin = { ...found, xfade: /\sxfade\s/.test(probe.stdout), drawtext: /\sdrawtext\s/.test(probe.stdout) };
  probed.set(found.path, bin);
  return bin;
}

/** Capabilities by binary path: probing spawns ffmpeg, and a process (a test run) may start many servers. */
const probed = new Map<string, FfmpegBinary>();

export interface RunOptions {
  /** Expected output duration in seconds, for progress. */
  durationS: number;
  onProgress?: (fraction: number) => void;
  /** Lets the caller stop the process (on shutdown). */
  onSpawn?: (child: ChildProcess) => void;
}

/**
 * Runs ffmpeg with `-progress pipe:1` and reports out_time over the expected duration.
 * Rejects with the tail of stderr when ffmpeg fails.
 */
export function runFfmpeg(bin: string, args: readonly string[], options: RunOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    options.onSpawn?.(child);
    let stderr = '';
    let pending = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      stderr = (stderr + s).slice(-4000);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      pending += s;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        // out_time_us is microseconds; old builds name the same value out_time_ms.
        const m = /^out_time_(?:us|ms)=(\d+)$/.exec(line);
        if (m && options.onProgress && options.durationS > 0) options.onProgress(Math.min(1, Number(m[1]) / 1e6 / options.durationS));
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        const summary = signal ? `ffmpeg was stopped by ${signal}` : `ffmpeg exited with code ${code}`;
        reject(new FfmpegError(`${summary}: ${lastLines(stderr)}`, summary, signal));
      }
    });
  });
}

export class FfmpegError extends Error {
  /** `publicMessage` leaves out ffmpeg's output, which names server paths. */
  constructor(message: string, readonly publicMessage: string, readonly signal: NodeJS.Signals | null) {
    super(message);
    this.name = 'FfmpegError';
  }
}

function lastLines(s: string): string {
  return s.trim().split('\n').slice(-3).join(' | ').slice(0, 500) || 'no error output';
}
