import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbedded } from '../../src/embedded/start.js';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { resolveFfmpeg } from '../../src/video/ffmpeg.js';
import { FORMATS, type Format } from '../../src/video/types.js';

export interface VideoBenchOptions {
  photos: number;
  format: Format;
  /** Seconds each request-rate measurement runs. */
  seconds: number;
  connections: number;
  /** wrk when available (default), else an in-process fetch loop. */
  load: 'wrk' | 'inproc';
  workDir: string;
  log: (line: string) => void;
}

export interface VideoBenchResult {
  ffmpeg: string;
  render: { photos: number; format: Format; width: number; height: number; renderS: number; videoS: number; ratio: number; preset: string };
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
function makePhotos(ffmpeg: string, dir: string, n: number): Buffer[] {
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

    o.log(`rendering a ${o.photos}-photo ${o.format} tour`);
    const photos = makePhotos(ffmpeg.path, o.workDir, o.photos);
    const pid = (
      await call(e, 'POST', '/v1/properties', key, {
        title: 'Benchmark Villa',
        address: '1 Render Road',
        city: 'Cores',
        price: 990000,
        currency: 'EUR',
        bedrooms: 5,
      })
    ).id;
    for (let i = 0; i < photos.length; i += 5) {
      await call(e, 'POST', `/v1/properties/${pid}/photos`, key, {
        photos: photos.slice(i, i + 5).map((p, j) => ({ filename: `p${i + j}.jpg`, data_base64: p.toString('base64') })),
      });
    }
    const t0 = performance.now();
    const video = await call(e, 'POST', '/v1/videos', key, { property_id: pid, template: 'tour', format: o.format });
    let v;
    do {
      await new Promise((r) => setTimeout(r, 100));
      v = await call(e, 'GET', `/v1/videos/${video.id}`, key);
    } while (v.status === 'queued' || v.status === 'rendering');
    const renderS = (performance.now() - t0) / 1000;
    if (v.status !== 'completed') throw new Error(`render failed: ${v.error}`);
    const asset = await call(e, 'GET', `/v1/assets/${v.video_asset_id}`, key);
    const videoS = asset.duration_s as number;

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
    const tool = o.load === 'wrk' && existsSync(WRK) ? 'wrk' : 'inproc';
    const measure = tool === 'wrk' ? wrk : inproc;
    o.log(`GET /v1/properties vs baseline, ${tool}, ${o.connections} connections, ${o.seconds} s each`);
    const baselineRps = await measure(`http://127.0.0.1:${baselinePort}/hello`, null, o.seconds, o.connections);
    const propertiesRps = await measure(`${e.url}/v1/properties`, key, o.seconds, o.connections);
    const propertyRps = await measure(`${e.url}/v1/properties/${oneId}`, key, o.seconds, o.connections);
    const { width, height } = FORMATS[o.format];
    return {
      ffmpeg: `${ffmpeg.path} (${ffmpeg.source})`,
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

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export function table(r: VideoBenchResult): string {
  const rows: [string, string][] = [
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
