import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbedded } from '../../src/embedded/start.js';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { readFileSync as readText, writeFileSync, chmodSync } from 'node:fs';
import { loadavg } from 'node:os';
import { DEFAULT_FFMPEG_ADDRESS_SPACE, resolveFfmpeg } from '../../src/video/ffmpeg.js';
import { DEFAULT_TIMINGS, tourFrames, X264_THREADS } from '../../src/video/tour.js';
import { FORMATS, type Format } from '../../src/video/types.js';

export interface VideoBenchOptions {
  photos: number;
  format: Format;
  /** Paired bare-encoder / real-render measurements (back to back, repeated: the machine is shared). */
  repeat: number;
  /** Photos of the memory run (default 100: the most a property may have). */
  memoryPhotos: number;
  /** Seconds each request-rate measurement runs. */
  seconds: number;
  connections: number;
  /** wrk when available (default), else an in-process fetch loop. */
  load: 'wrk' | 'inproc';
  workDir: string;
  log: (line: string) => void;
}

export interface PairedRun {
  /** Seconds of the bare encoder on the same frames (summed over the formats for the pack). */
  bareS: number;
  renderS: number;
  ratio: number;
  /** CPU seconds (user + system) of the bare encoder(s), and of every ffmpeg the render ran: figures a shared machine disturbs less. */
  bareCpuS: number;
  renderCpuS: number;
}

export interface VideoBenchResult {
  ffmpeg: string;
  load: { before: string; after: string };
  render: { photos: number; format: Format; width: number; height: number; renderS: number; videoS: number; ratio: number; preset: string };
  /** The single render (captions, branding, voice-over and music on) against the bare encoder, per pair, and the median ratio. */
  single: { frames: number; runs: PairedRun[]; medianRatio: number; goal: number; encoderOnTourFrames: Timed | null };
  /** The pack (16:9, 9:16, 1:1 at once) against the sum of the bare encodes of its three formats. */
  pack: { runs: PairedRun[]; medianRatio: number; goal: number };
  /** A tour of memoryPhotos photos under the default 2 GiB address-space limit: the largest ffmpeg process. */
  memory: { photos: number; status: string; limitBytes: number; peakVmBytes: number; peakRssBytes: number; processes: number; renderS: number };
  api: { tool: string; connections: number; seconds: number; propertiesRps: number; propertyRps: number; baselineRps: number; share: number };
}

export const ADMIN = 'bsa_bench_admin';
const WRK = '/usr/bin/wrk';

export async function call(e: { url: string }, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(e.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const parsed = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** A tenant on the agency plan with an API key, through the public routes. */
export async function apiKey(e: { url: string }): Promise<string> {
  const t = await call(e, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'agency' });
  await call(e, 'POST', `/v1/admin/tenants/${t.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password' });
  const login = await fetch(`${e.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }),
  });
  const { token } = (await login.json()) as { token: string };
  return (await call(e, 'POST', '/v1/api-keys', token, { name: 'bench' })).key;
}

/** Camera-sized JPEGs with detail (fractals and test patterns), so the encoder has real work. */
export function makePhotos(ffmpeg: string, dir: string, n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => {
    const out = join(dir, `photo-${i}.jpg`);
    const src = i % 2 === 0 ? `mandelbrot=size=1600x1200:start_scale=${2 + i * 0.3}` : `testsrc2=size=1600x1200`;
    execFileSync(ffmpeg, ['-v', 'error', '-y', '-f', 'lavfi', '-i', src, '-ss', String(i), '-frames:v', '1', '-q:v', '3', out]);
    return readFileSync(out);
  });
}

async function wrk(url: string, token: string | null, seconds: number, connections: number): Promise<number> {
  const args = ['-t2', `-c${connections}`, `-d${seconds}s`, ...(token ? ['-H', `Authorization: Bearer ${token}`] : []), url];
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}`))));
  });
  if (/Non-2xx or 3xx responses/.test(out)) throw new Error(`wrk saw error responses:\n${out}`);
  const m = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!m) throw new Error(`cannot read wrk output:\n${out}`);
  return Number(m[1]);
}

/** The fallback load: `connections` concurrent fetch loops in this process (which also runs the server). */
async function inproc(url: string, token: string | null, seconds: number, connections: number): Promise<number> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const end = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
        done++;
      }
    }),
  );
  return done / seconds;
}

export async function runVideoBench(o: VideoBenchOptions): Promise<VideoBenchResult> {
  const ffmpeg = resolveFfmpeg();
  o.log(`ffmpeg ${ffmpeg.path} (${ffmpeg.source}, xfade ${ffmpeg.xfade})`);
  const preset = 'ultrafast';
  // The rate limit would cap the request-rate measurement at 100/min; the bench raises it.
  const e = await startEmbedded({
    port: 0,
    db: join(o.workDir, 'bench.db'),
    dataDir: join(o.workDir, 'data'),
    adminToken: ADMIN,
    video: { preset },
    limits: { apiKey: { limit: 1e9, windowMs: 60_000 }, tenantApiKeys: { limit: 1e9, windowMs: 60_000 }, queuedVideosPerTenant: 1e9 },
  });
  const baseline = new HttpServer();
  baseline.get('/hello', () => json(200, { ok: true }));
  const baselinePort = await baseline.listen('127.0.0.1', 0);
  try {
    const key = await apiKey(e);

    const photos = makePhotos(ffmpeg.path, o.workDir, o.photos);
    const loadBefore = loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    const pid = await benchProperty(e, key, photos);
    // Branding, a music track: what an agent's pack carries.
    await call(e, 'PUT', '/v1/branding', key, { primary_color: '#1B3A5C', secondary_color: '#F2C14E', font: 'sans' });
    const logo = join(o.workDir, 'logo.png');
    execFileSync(ffmpeg.path, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=orange:s=400x160', '-frames:v', '1', logo]);
    await upload(e, key, 'PUT', '/v1/branding/logo', 'image/png', readFileSync(logo));
    const music = join(o.workDir, 'music.mp3');
    execFileSync(ffmpeg.path, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=220:d=40', '-b:a', '128k', music]);
    const track = await upload(e, key, 'POST', '/v1/audio?filename=music.mp3', 'audio/mpeg', readFileSync(music));
    const full = { captions: true, voiceover: true, music_id: track.id };

    // The bare encoder: a still image already at the output size, decoded once, the same frames, codec settings and threads, no filters.
    const frames = tourFrames(o.photos, DEFAULT_TIMINGS, ffmpeg.xfade);
    const bare = (format: Format) => bareEncode(ffmpeg.path, o.workDir, format, frames, preset);
    const packFormats: Format[] = ['16:9', '9:16', '1:1'];
    const single: PairedRun[] = [];
    const pack: PairedRun[] = [];
    let first: Rendered | null = null;
    for (let r = 0; r < o.repeat; r++) {
      o.log(`pair ${r + 1}/${o.repeat}: bare encode, then the ${o.photos}-photo ${o.format} tour with captions, branding, voice-over and music`);
      const b = await bare(o.format);
      const t = await renderVideos(e, key, { property_id: pid, template: 'tour', format: o.format, ...full });
      first ??= t;
      single.push(paired(b, t));
      o.log(
        `  bare ${round(b.wallS)} s, tour ${round(t.renderS)} s: ${round(t.renderS / b.wallS)}x; CPU ${round(b.cpuS)} s, ${round(t.cpuS)} s (load ${loadavg()[0]!.toFixed(1)})`,
      );
      o.log(`pair ${r + 1}/${o.repeat}: bare encodes of ${packFormats.join(', ')}, then the pack`);
      const sum: Timed = { wallS: 0, cpuS: 0 };
      for (const f of packFormats) {
        const x = await bare(f);
        sum.wallS += x.wallS;
        sum.cpuS += x.cpuS;
      }
      const p = await renderVideos(e, key, { property_id: pid, template: 'tour', formats: packFormats, ...full });
      pack.push(paired(sum, p));
      o.log(
        `  bare sum ${round(sum.wallS)} s, pack ${round(p.renderS)} s: ${round(p.renderS / sum.wallS)}x; CPU ${round(sum.cpuS)} s, ${round(p.cpuS)} s (load ${loadavg()[0]!.toFixed(1)})`,
      );
    }
    o.log(`x264 alone on the first tour's own frames, decoded once to raw (for information)`);
    const tourFile = join(o.workDir, 'tour.mp4');
    writeFileSync(
      tourFile,
      Buffer.from(await (await fetch(`${e.url}/v1/assets/${first!.videoAssetId}/file`, { headers: { authorization: `Bearer ${key}` } })).arrayBuffer()),
    );
    const encoderOnTourFrames = await encodeFramesOf(ffmpeg.path, o.workDir, tourFile, o.format, frames, preset);
    const renderS = first!.renderS;
    const videoS = first!.videoS;
    // A realistic list page: 20 properties with two photos each (the page size by default).
    const small = photos[0]!.toString('base64');
    let oneId = 0;
    for (let i = 0; i < 40; i++) {
      const id = (
        await call(e, 'POST', '/v1/properties', key, { title: `Listing ${i}`, address: `${i} Bench St`, price: 100000 + i, currency: 'USD', bedrooms: i % 5 })
      ).id;
      await call(e, 'POST', `/v1/properties/${id}/photos`, key, { photos: [{ data_base64: small }, { data_base64: small }] });
      oneId = id;
    }
    const memory = await memoryRun(ffmpeg.path, o, photos);
    const tool = o.load === 'wrk' && existsSync(WRK) ? 'wrk' : 'inproc';
    const measure = tool === 'wrk' ? wrk : inproc;
    o.log(`GET /v1/properties vs baseline, ${tool}, ${o.connections} connections, ${o.seconds} s each`);
    const baselineRps = await measure(`http://127.0.0.1:${baselinePort}/hello`, null, o.seconds, o.connections);
    const propertiesRps = await measure(`${e.url}/v1/properties`, key, o.seconds, o.connections);
    const propertyRps = await measure(`${e.url}/v1/properties/${oneId}`, key, o.seconds, o.connections);
    const { width, height } = FORMATS[o.format];
    return {
      ffmpeg: `${ffmpeg.path} (${ffmpeg.source})`,
      load: {
        before: loadBefore,
        after: loadavg()
          .map((x) => x.toFixed(2))
          .join(' '),
      },
      single: {
        frames,
        runs: single,
        medianRatio: median(single.map((x) => x.ratio)),
        goal: 1.2,
        encoderOnTourFrames: { wallS: round(encoderOnTourFrames.wallS), cpuS: round(encoderOnTourFrames.cpuS) },
      },
      pack: { runs: pack, medianRatio: median(pack.map((x) => x.ratio)), goal: 1.15 },
      memory,
      render: { photos: o.photos, format: o.format, width, height, renderS: round(renderS), videoS, ratio: round(renderS / videoS), preset },
      api: {
        tool,
        connections: o.connections,
        seconds: o.seconds,
        propertiesRps: Math.round(propertiesRps),
        propertyRps: Math.round(propertyRps),
        baselineRps: Math.round(baselineRps),
        share: round(propertiesRps / baselineRps),
      },
    };
  } finally {
    await baseline.close();
    await e.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round(s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : 0;
}

async function benchProperty(e: { url: string }, key: string, photos: Buffer[]): Promise<number> {
  const pid = (
    await call(e, 'POST', '/v1/properties', key, {
      title: 'Benchmark Villa',
      address: '1 Render Road',
      city: 'Cores',
      price: 990000,
      currency: 'EUR',
      bedrooms: 5,
      bathrooms: 3,
      area: 240,
      description: 'A bright villa with a garden and a view of the hills. Quiet street.',
    })
  ).id;
  for (let i = 0; i < photos.length; i += 5) {
    await call(e, 'POST', `/v1/properties/${pid}/photos`, key, {
      photos: photos.slice(i, i + 5).map((p, j) => ({ filename: `p${i + j}.jpg`, data_base64: p.toString('base64') })),
    });
  }
  return pid;
}

async function upload(e: { url: string }, key: string, method: string, path: string, type: string, body: Buffer): Promise<any> {
  const res = await fetch(e.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });
  const parsed = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

interface Rendered {
  renderS: number;
  /** CPU seconds of the ffmpeg processes the render ran (children of this process, which runs the server). */
  cpuS: number;
  videoS: number;
  videoAssetId: number;
}

function paired(bare: Timed, r: Rendered): PairedRun {
  return { bareS: round(bare.wallS), renderS: round(r.renderS), ratio: round(r.renderS / bare.wallS), bareCpuS: round(bare.cpuS), renderCpuS: round(r.cpuS) };
}

/** Seconds from POST /v1/videos to the poll that sees every video of the request finished. */
async function renderVideos(e: { url: string }, key: string, body: Record<string, unknown>): Promise<Rendered> {
  const cpu0 = childCpuS();
  const t0 = performance.now();
  const made = await call(e, 'POST', '/v1/videos', key, body);
  const ids: number[] = made.data ? made.data.map((v: any) => v.id) : [made.id];
  let videoS = 0;
  let videoAssetId = 0;
  for (const id of ids) {
    let v;
    do {
      await new Promise((r) => setTimeout(r, 50));
      v = await call(e, 'GET', `/v1/videos/${id}`, key);
    } while (v.status === 'queued' || v.status === 'rendering');
    if (v.status !== 'completed') throw new Error(`render failed: ${v.error}`);
    videoS = (await call(e, 'GET', `/v1/assets/${v.video_asset_id}`, key)).duration_s;
    videoAssetId ||= v.video_asset_id;
  }
  return { renderS: (performance.now() - t0) / 1000, cpuS: childCpuS() - cpu0, videoS, videoAssetId };
}

/** CPU seconds (user + system) of this process's children it has waited for: every ffmpeg the server ran, and the bench's own. */
function childCpuS(): number {
  const stat = readText('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / CLK_TCK;
}

const CLK_TCK = 100;

/** What one timed run took: wall-clock seconds and the CPU seconds of the processes it waited for. */
export interface Timed {
  wallS: number;
  cpuS: number;
}

/** Runs ffmpeg to the end, timed. */
async function timedFfmpeg(ffmpeg: string, args: string[]): Promise<Timed> {
  const cpu0 = childCpuS();
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg ${args.slice(0, 12).join(' ')} exited ${code}`))));
  });
  return { wallS: (performance.now() - t0) / 1000, cpuS: childCpuS() - cpu0 };
}

/** x264 with the render's settings and threads, on raw yuv420p frames of width x height read from `input`, looped when `loop`. */
function x264Args(input: string, width: number, height: number, frames: number, preset: string, loop: boolean, out: string): string[] {
  const args = ['-v', 'error', '-y', '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-video_size', `${width}x${height}`, '-framerate', '25'];
  args.push(...(loop ? ['-stream_loop', '-1'] : []), '-i', input, '-frames:v', String(frames));
  args.push('-c:v', 'libx264', '-preset', preset, '-crf', '23', '-threads:v', String(X264_THREADS), '-pix_fmt', 'yuv420p', '-r', '25', out);
  return args;
}

/**
 * The encoder's own limit: ffmpeg encoding `frames` frames of a still image at the output size,
 * same x264 settings, no filters. The still is decoded once, before the clock starts: it is kept
 * as one raw yuv420p frame and read again for every frame (a copy from the page cache, no
 * decoding, no pixel-format conversion), so the time is the encoder's. (Looping a JPEG with
 * `-loop 1` decodes it and converts its full-range yuvj420p for every frame, which cost more
 * than x264 itself and made the bare encoder look slower than it is.)
 */
async function bareEncode(ffmpeg: string, dir: string, format: Format, frames: number, preset: string): Promise<Timed> {
  const { width, height } = FORMATS[format];
  const still = join(dir, `still-${width}x${height}.yuv`);
  if (!existsSync(still))
    execFileSync(ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=${width}x${height}`,
      '-frames:v',
      '1',
      '-pix_fmt',
      'yuv420p',
      '-f',
      'rawvideo',
      still,
    ]);
  return timedFfmpeg(ffmpeg, x264Args(still, width, height, frames, preset, true, join(dir, 'bare.mp4')));
}

/**
 * For information beside the bare encoder: x264 with the same settings on the rendered tour's
 * own frames (panned, cross-faded, captioned), decoded once to raw yuv420p before the clock
 * starts. A moving picture costs the encoder more than a still; this is that cost alone.
 */
async function encodeFramesOf(ffmpeg: string, dir: string, video: string, format: Format, frames: number, preset: string): Promise<Timed> {
  const { width, height } = FORMATS[format];
  const raw = join(dir, 'tour-frames.yuv');
  execFileSync(ffmpeg, ['-v', 'error', '-y', '-i', video, '-an', '-frames:v', String(frames), '-pix_fmt', 'yuv420p', '-f', 'rawvideo', raw]);
  try {
    return await timedFfmpeg(ffmpeg, x264Args(raw, width, height, frames, preset, false, join(dir, 'reencoded.mp4')));
  } finally {
    rmSync(raw, { force: true });
  }
}

/**
 * A tour of `memoryPhotos` photos at 1080p under the default address-space limit, through a
 * wrapper that records each ffmpeg process's peak address space and resident set. Parts are
 * shortened (0.6 s a photo): what an ffmpeg process holds depends on its photos and frame size,
 * not on how long each is shown.
 */
async function memoryRun(ffmpeg: string, o: VideoBenchOptions, photos: Buffer[]): Promise<VideoBenchResult['memory']> {
  const log = join(o.workDir, 'ffmpeg-peaks.log');
  const wrapper = join(o.workDir, 'ffmpeg-peak.sh');
  writeFileSync(
    wrapper,
    `#!/bin/bash\n"${ffmpeg}" "$@" &\npid=$!\npeak=0; hwm=0\nwhile kill -0 $pid 2>/dev/null; do\n  s=$(grep -E '^(VmPeak|VmHWM)' /proc/$pid/status 2>/dev/null | awk '{print $2}' | tr '\\n' ' ')\n  set -- $s; [ -n "$1" ] && peak=$1 && hwm=$2\n  sleep 0.1\ndone\nwait $pid; code=$?\necho "$peak $hwm" >> "${log}"\nexit $code\n`,
  );
  chmodSync(wrapper, 0o700);
  o.log(`memory: a ${o.memoryPhotos}-photo 16:9 tour under the default ${DEFAULT_FFMPEG_ADDRESS_SPACE} byte limit`);
  const e = await startEmbedded({
    port: 0,
    db: join(o.workDir, 'memory.db'),
    dataDir: join(o.workDir, 'memory-data'),
    adminToken: ADMIN,
    ffmpegPath: wrapper,
    video: { preset: 'ultrafast', timings: { titleS: 1, photoS: 0.6, fadeS: 0.2, fps: 25 } },
    limits: { apiKey: { limit: 1e9, windowMs: 60_000 }, tenantApiKeys: { limit: 1e9, windowMs: 60_000 }, queuedVideosPerTenant: 1e9 },
  });
  try {
    const key = await apiKey(e);
    const all = Array.from({ length: o.memoryPhotos }, (_, i) => photos[i % photos.length]!);
    const pid = await benchProperty(e, key, all);
    writeFileSync(log, '');
    const t0 = performance.now();
    const made = await call(e, 'POST', '/v1/videos', key, { property_id: pid, template: 'tour', format: '16:9' });
    let v;
    do {
      await new Promise((r) => setTimeout(r, 200));
      v = await call(e, 'GET', `/v1/videos/${made.id}`, key);
    } while (v.status === 'queued' || v.status === 'rendering');
    const peaks = readText(log, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ').map((n) => Number(n) * 1024));
    return {
      photos: o.memoryPhotos,
      status: v.status === 'completed' ? 'completed' : `failed: ${v.error}`,
      limitBytes: DEFAULT_FFMPEG_ADDRESS_SPACE,
      peakVmBytes: Math.max(0, ...peaks.map((p) => p[0]!)),
      peakRssBytes: Math.max(0, ...peaks.map((p) => p[1]!)),
      processes: peaks.length,
      renderS: round((performance.now() - t0) / 1000),
    };
  } finally {
    await e.close();
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export function table(r: VideoBenchResult): string {
  const mib = (b: number) => `${(b / 1024 ** 2).toFixed(0)} MiB`;
  const rows: [string, string][] = [
    ['load average (1, 5, 15 min) before / after', `${r.load.before} / ${r.load.after}`],
    ['bare encoder', 'x264 on a still decoded once (raw yuv420p), same frames and settings, no filters'],
    ...r.single.runs.map((x, i): [string, string] => [
      `pair ${i + 1}: bare encode ${r.single.frames} frames / tour with captions, branding, voice, music`,
      `${x.bareS} s / ${x.renderS} s = ${x.ratio} (CPU ${x.bareCpuS} s / ${x.renderCpuS} s)`,
    ]),
    [`single render / bare encoder (median; goal <= ${r.single.goal})`, String(r.single.medianRatio)],
    ...(r.single.encoderOnTourFrames
      ? [
          [
            "  information: x264 alone on the tour's own frames (decoded once)",
            `${r.single.encoderOnTourFrames.wallS} s (CPU ${r.single.encoderOnTourFrames.cpuS} s)`,
          ] as [string, string],
        ]
      : []),
    ...r.pack.runs.map((x, i): [string, string] => [
      `pair ${i + 1}: bare 16:9 + 9:16 + 1:1 / the pack`,
      `${x.bareS} s / ${x.renderS} s = ${x.ratio} (CPU ${x.bareCpuS} s / ${x.renderCpuS} s)`,
    ]),
    [`pack / sum of bare encodes (median; goal <= ${r.pack.goal})`, String(r.pack.medianRatio)],
    [
      `${r.memory.photos}-photo 1080p tour under a ${mib(r.memory.limitBytes)} limit`,
      `${r.memory.status} in ${r.memory.renderS} s, ${r.memory.processes} ffmpeg runs`,
    ],
    ['  largest ffmpeg: peak address space / peak resident', `${mib(r.memory.peakVmBytes)} / ${mib(r.memory.peakRssBytes)}`],
    ['ffmpeg', r.ffmpeg],
    [`render ${r.render.photos}-photo ${r.render.format} tour (${r.render.width}x${r.render.height}, x264 ${r.render.preset})`, `${r.render.renderS} s`],
    ['video duration', `${r.render.videoS} s`],
    ['render time / video duration', `${r.render.ratio} (${r.render.ratio < 1 ? 'faster' : 'slower'} than real time)`],
    [`GET /v1/properties (20 per page, ${r.api.tool}, ${r.api.connections} conns)`, `${r.api.propertiesRps} req/s`],
    ['GET /v1/properties/:id (one property, two photos)', `${r.api.propertyRps} req/s`],
    ['baseline: bare HttpServer GET /hello', `${r.api.baselineRps} req/s`],
    ['list / baseline', String(r.api.share)],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}
