import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getPriority, setPriority } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

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

export interface FfmpegLocation {
  path: string;
  source: FfmpegSource;
}

/**
 * Finds ffmpeg without running it: an explicit option, else FFMPEG_PATH, else `ffmpeg` on
 * PATH, else the binary of the @ffmpeg-installer/ffmpeg package (an old static build without
 * xfade). Throws with the fix when none exists.
 */
export function locateFfmpeg(explicit?: string): FfmpegLocation {
  const named: FfmpegLocation | null = explicit
    ? { path: explicit, source: 'option' }
    : process.env.FFMPEG_PATH
      ? { path: process.env.FFMPEG_PATH, source: 'FFMPEG_PATH' }
      : null;
  if (named) {
    // A bare name is looked up on PATH, as spawning it would.
    const path = /[\\/]/.test(named.path) ? (existsSync(named.path) ? named.path : null) : onPath(named.path);
    if (path === null) throw new Error(`ffmpeg not found: ${named.path} (from ${named.source}) does not exist`);
    return { path, source: named.source };
  }
  const p = onPath(process.platform === 'win32' ? 'ffmpeg.exe' : 'ffmpeg');
  if (p) return { path: p, source: 'PATH' };
  const pkg = fromPackage();
  if (pkg) return { path: pkg, source: '@ffmpeg-installer/ffmpeg' };
  throw new Error('ffmpeg not found: give --ffmpeg PATH (or set FFMPEG_PATH), install ffmpeg on PATH, or install @ffmpeg-installer/ffmpeg');
}

/** Capabilities by binary path: probing spawns ffmpeg (a fifth of a CPU second), and a process (a test run) may start many servers. */
const probed = new Map<string, FfmpegBinary>();
const probing = new Map<string, Promise<FfmpegBinary>>();
/** More than any build's filter list: a binary printing past it is not the ffmpeg we expect. */
const MAX_PROBE_OUTPUT = 1024 * 1024;
const PROBE_TIMEOUT_MS = 10_000;

function fromFilterList(found: FfmpegLocation, filters: string): FfmpegBinary {
  const bin = { ...found, xfade: /\sxfade\s/.test(filters), drawtext: /\sdrawtext\s/.test(filters) };
  probed.set(found.path, bin);
  return bin;
}

function doesNotRun(found: FfmpegLocation, why: string): Error {
  return new Error(`ffmpeg at ${found.path} (from ${found.source}) does not run: ${why}`);
}

/** Finds ffmpeg and reads its filter list at once, blocking: for benchmarks and tools, not servers. */
export function resolveFfmpeg(explicit?: string): FfmpegBinary {
  const found = locateFfmpeg(explicit);
  const cached = probed.get(found.path);
  if (cached) return { ...cached, source: found.source };
  const probe = spawnSync(found.path, ['-hide_banner', '-filters'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, maxBuffer: MAX_PROBE_OUTPUT });
  if (probe.status !== 0) throw doesNotRun(found, probe.error?.message ?? probe.stderr.slice(0, 200));
  return fromFilterList(found, probe.stdout);
}

/**
 * The capabilities of the ffmpeg at `found`, read from its filter list without blocking; once
 * per binary and process (a failure is not kept: the next render tries again). A server probes
 * at its first render rather than at start, so a server that never renders never pays for it.
 */
export function probeFfmpeg(found: FfmpegLocation): Promise<FfmpegBinary> {
  const cached = probed.get(found.path);
  if (cached) return Promise.resolve({ ...cached, source: found.source });
  let pending = probing.get(found.path);
  if (!pending) {
    pending = readFilterList(found).finally(() => probing.delete(found.path));
    probing.set(found.path, pending);
  }
  return pending.then((bin) => ({ ...bin, source: found.source }));
}

function readFilterList(found: FfmpegLocation): Promise<FfmpegBinary> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(found.path, ['-hide_banner', '-filters'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: PROBE_TIMEOUT_MS });
    } catch (err) {
      reject(doesNotRun(found, (err as Error).message));
      return;
    }
    let out = '';
    let err = '';
    let tooLong = false;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (out.length + chunk.length > MAX_PROBE_OUTPUT) {
        tooLong = true;
        child.kill('SIGKILL');
      } else out += chunk;
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      if (err.length < 200) err += chunk;
    });
    child.on('error', (e) => reject(doesNotRun(found, e.message)));
    child.on('close', (code, signal) => {
      if (code === 0 && !tooLong) resolve(fromFilterList(found, out));
      else reject(doesNotRun(found, tooLong ? 'its filter list is longer than any ffmpeg prints' : err.slice(0, 200) || `exit ${signal ?? code}`));
    });
  });
}

/** Address space an ffmpeg process may map by default (`prlimit --as`): 2 GiB. */
export const DEFAULT_FFMPEG_ADDRESS_SPACE = 2 * 1024 ** 3;

/**
 * How an ffmpeg process is confined: killed after `timeoutMs` of wall-clock time, and run
 * under `prlimit --as` when prlimit exists, so an allocation past the limit fails inside
 * ffmpeg (which then exits with an error) instead of pushing the machine into swap.
 */
export interface FfmpegConfinement {
  /** prlimit's path; null runs ffmpeg with the wall-clock limit alone. */
  prlimit: string | null;
  addressSpaceBytes: number;
}

/**
 * Stack reserved per thread of an ffmpeg process. glibc reserves the process's stack limit
 * (8 MiB by default) of address space for every thread, and a render has dozens (decoders,
 * encoders, filters): under an address-space limit that reservation, not memory in use, is
 * what ran out first. 2 MiB is glibc's own default where no limit is set.
 */
export const FFMPEG_THREAD_STACK = 2 * 1024 * 1024;

/**
 * Environment of an ffmpeg process: at most two malloc arenas (glibc otherwise reserves up to
 * 64 MiB of address space for each of up to 8 per core, the other thing that filled a 2 GiB
 * limit before memory did).
 */
function ffmpegEnv(): NodeJS.ProcessEnv {
  return { ...process.env, MALLOC_ARENA_MAX: '2' };
}

/** prlimit (util-linux) on PATH, on Linux only. */
export function findPrlimit(): string | null {
  return process.platform === 'linux' ? onPath('prlimit') : null;
}

export interface RunOptions {
  /** Expected output duration in seconds, for progress. */
  durationS: number;
  /** Wall-clock milliseconds before the process is killed. */
  timeoutMs: number;
  confinement: FfmpegConfinement;
  onProgress?: (fraction: number) => void;
  /** Lets the caller stop the process (on shutdown). */
  onSpawn?: (child: ChildProcess) => void;
  /** How much nicer than the server the process runs (0 when absent): higher yields the CPU to other work. */
  nice?: number;
}

/**
 * Runs ffmpeg with `-progress pipe:1` and reports out_time over the expected duration.
 * Rejects with the tail of stderr when ffmpeg fails, and kills it past its wall-clock limit.
 */
export function runFfmpeg(bin: string, args: readonly string[], options: RunOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const full = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats', ...args];
    const { prlimit, addressSpaceBytes } = options.confinement;
    // prlimit sets the limit on itself and then execs ffmpeg: the child's pid is ffmpeg's, so a kill reaches it.
    const child = prlimit
      ? spawn(prlimit, [`--as=${addressSpaceBytes}`, `--stack=${FFMPEG_THREAD_STACK}`, '--', bin, ...full], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: ffmpegEnv(),
        })
      : spawn(bin, full, { stdio: ['ignore', 'pipe', 'pipe'], env: ffmpegEnv() });
    // Set before ffmpeg starts its threads (spawn returns once the child has exec'd; ffmpeg opens its
    // inputs first), which inherit it. A process already gone is no matter: its close event follows.
    if (options.nice && child.pid !== undefined) {
      try {
        setPriority(child.pid, Math.min(19, getPriority() + options.nice));
      } catch {
        // Gone already, or not allowed: the process then runs at the server's priority, which only yields less.
      }
    }
    options.onSpawn?.(child);
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      Math.max(0, options.timeoutMs),
    );
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
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        const summary = `time limit: ffmpeg ran longer than its wall-clock limit of ${Math.round(options.timeoutMs / 100) / 10} s and was stopped`;
        reject(new FfmpegError(summary, summary, signal, 'time'));
      } else if (code === 0) resolve();
      else {
        const memory = MEMORY_FAILURE.test(stderr);
        const summary = memory
          ? `out of memory: ffmpeg needed more than its address-space limit of ${addressSpaceBytes} bytes (${(addressSpaceBytes / 1024 ** 3).toFixed(2)} GiB)`
          : signal
            ? `ffmpeg was stopped by ${signal}`
            : `ffmpeg exited with code ${code}`;
        reject(new FfmpegError(`${summary}: ${lastLines(stderr)}`, summary, signal, memory ? 'memory' : 'other', stderr));
      }
    });
  });
}

/** What ffmpeg and the libraries it uses print when an allocation or a thread fails. */
const MEMORY_FAILURE =
  /cannot allocate memory|out of memory|ENOMEM|failed to map segment|pthread_create|resource temporarily unavailable|malloc of size|x264 \[error\]: malloc/i;

export class FfmpegError extends Error {
  /** `publicMessage` leaves out ffmpeg's output, which names server paths. */
  constructor(
    message: string,
    readonly publicMessage: string,
    readonly signal: NodeJS.Signals | null,
    /** Why it failed, as far as can be told: the address-space limit, the wall-clock limit, or something else. */
    readonly cause: 'memory' | 'time' | 'other' = 'other',
    /** The tail of ffmpeg's error output (server paths included: for the log and for naming a photo, never for clients). */
    readonly stderr: string = '',
  ) {
    super(message);
    this.name = 'FfmpegError';
  }
}

function lastLines(s: string): string {
  return s.trim().split('\n').slice(-3).join(' | ').slice(0, 500) || 'no error output';
}

/** ffprobe beside the ffmpeg binary, else on PATH; null when there is none. */
export function findFfprobe(ffmpegPath: string): string | null {
  const beside = join(dirname(ffmpegPath), process.platform === 'win32' ? 'ffprobe.exe' : 'ffprobe');
  if (existsSync(beside)) return beside;
  return onPath(process.platform === 'win32' ? 'ffprobe.exe' : 'ffprobe');
}

export interface AudioProbe {
  format: string;
  codec: string;
  durationS: number;
  /** Streams besides the one audio stream (a cover image is allowed; video is not). */
  videoStreams: number;
  audioStreams: number;
}

/** Reads an audio file's container, codec and duration with ffprobe (under a time limit); null when ffprobe cannot read it. */
export function probeAudio(ffprobe: string, file: string, timeoutMs = 20_000): Promise<AudioProbe | null> {
  return new Promise((resolve) => {
    const child = spawn(
      ffprobe,
      ['-v', 'error', '-show_entries', 'format=format_name,duration:stream=codec_type,codec_name,disposition', '-of', 'json', file],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      if (out.length < 100_000) out += s;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return resolve(null);
      try {
        const j = JSON.parse(out) as {
          format?: { format_name?: string; duration?: string };
          streams?: { codec_type?: string; codec_name?: string; disposition?: { attached_pic?: number } }[];
        };
        const streams = j.streams ?? [];
        const audio = streams.filter((st) => st.codec_type === 'audio');
        const video = streams.filter((st) => st.codec_type === 'video' && st.disposition?.attached_pic !== 1);
        const durationS = Number(j.format?.duration);
        if (audio.length === 0 || !Number.isFinite(durationS)) return resolve(null);
        resolve({ format: j.format?.format_name ?? '', codec: audio[0]!.codec_name ?? '', durationS, videoStreams: video.length, audioStreams: audio.length });
      } catch {
        resolve(null);
      }
    });
  });
}
