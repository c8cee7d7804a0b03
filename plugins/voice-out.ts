/**
 * The voice-out plugin: synthesises a Say line to a WAV file. Engines, picked by
 * SERVICE_TTS_ENGINE (default "auto"):
 *   openai        an OpenAI-compatible POST /audio/speech (SERVICE_TTS_BASE_URL, SERVICE_TTS_MODEL,
 *                 SERVICE_TTS_VOICE, SERVICE_TTS_KEY); "auto" picks it when SERVICE_TTS_BASE_URL is set
 *   espeak        Debian's espeak-ng binary (SERVICE_ESPEAK_PATH, default espeak-ng on PATH)
 *   espeak-wasm   the espeak-ng npm package (WebAssembly, offline)
 * "auto" without SERVICE_TTS_BASE_URL uses the binary when it runs, else the WASM build.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import OpenAI from 'openai';
// Only Node built-ins behind it: the plugin, run from dist/plugins beside dist/src, takes the
// one mkdir -p that always ends rather than a copy of it.
import { PRIVATE_DIR_MODE } from '../src/store/files.js';
import { makeDir } from '../src/store/make-dir.js';
import {
  Backoff,
  PluginError,
  describeError,
  runPlugin,
  type HealthResult,
  type SynthesizeParams,
  type SynthesizeResult,
  type VoiceParam,
} from './protocol.js';

const ENGINES = ['openai', 'espeak', 'espeak-wasm'] as const;
type Engine = (typeof ENGINES)[number];
const isEngine = (v: string): v is Engine => (ENGINES as readonly string[]).includes(v);

/** Duration of a PCM WAV from its fmt and data chunks; 0 when it is not one. */
function wavDuration(buf: Uint8Array): number {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < 44 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return 0;
  let byteRate = 0;
  let off = 12;
  while (off + 8 <= b.length) {
    const id = b.toString('latin1', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ') byteRate = b.readUInt32LE(off + 16);
    if (id === 'data') {
      // A streamed WAV may carry a placeholder size; what is really there counts.
      const real = Math.min(size, b.length - off - 8);
      return byteRate > 0 ? real / byteRate : 0;
    }
    off += 8 + size + (size % 2);
  }
  return 0;
}

const SAFE_FILE = /^[A-Za-z0-9_-]{1,80}\.wav$/;

function espeakArgs(voice: VoiceParam, out: string): string[] {
  const variant = /^[mf][1-7]$/.test(voice.variant) ? `+${voice.variant}` : '';
  const pitch = Math.round(Math.min(99, Math.max(0, voice.pitch)));
  const speed = Math.round(Math.min(450, Math.max(80, voice.speed)));
  return ['-w', out, '-v', `en-us${variant}`, '-p', String(pitch), '-s', String(speed)];
}

function run(cmd: string, args: string[], input: string, timeoutMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
    child.stdin!.on('error', () => {});
    child.stdin!.end(input);
  });
}

type ESpeakModule = (options: Record<string, unknown>) => Promise<{ FS: { readFile(path: string): Uint8Array } }>;

// The project's lib settings carry no WebAssembly typings; the few calls used are typed here.
type WasmModule = object;
type WasmInstance = object;
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<WasmModule>;
      instantiate(module: WasmModule, imports: object): Promise<WasmInstance>;
    };
  }
).WebAssembly;
/** A variable specifier keeps tsc from looking for typings the package does not ship. */
const ESPEAK_PACKAGE = 'espeak-ng';

/** The WASM engine: the module is compiled once; each line runs a fresh instance, one at a time (each takes ~32 MB). */
class WasmEspeak {
  private compiled: Promise<{ factory: ESpeakModule; module: WasmModule }> | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  private load(): Promise<{ factory: ESpeakModule; module: WasmModule }> {
    return (this.compiled ??= (async () => {
      const mod = (await import(ESPEAK_PACKAGE)) as { default: ESpeakModule };
      const wasmUrl = new URL('espeak-ng.wasm', import.meta.resolve(ESPEAK_PACKAGE));
      const module = await Wasm.compile(await readFile(wasmUrl));
      return { factory: mod.default, module };
    })());
  }

  synth(text: string, voice: VoiceParam): Promise<Uint8Array> {
    const job = this.chain.then(async () => {
      const { factory, module } = await this.load();
      // A line starting with "-" would be read as an option by espeak's argument parser.
      const safe = text.startsWith('-') ? ` ${text}` : text;
      // Emscripten never settles the factory when instantiation fails, so the failure is raced
      // against it: the line fails at once instead of hanging until the request times out.
      let instantiateFailed: (err: unknown) => void = () => {};
      const failure = new Promise<never>((_, reject) => (instantiateFailed = reject));
      const es = await Promise.race([
        factory({
          arguments: [...espeakArgs(voice, 'out.wav'), safe],
          print() {},
          printErr() {},
          instantiateWasm(imports: object, done: (i: WasmInstance, m: WasmModule) => void) {
            Wasm.instantiate(module, imports).then((instance) => done(instance, module), instantiateFailed);
            return {};
          },
        }),
        failure,
      ]);
      return es.FS.readFile('out.wav');
    });
    this.chain = job.catch(() => {});
    return job;
  }
}

async function binaryWorks(path: string): Promise<boolean> {
  try {
    const r = await run(path, ['--version'], '', 5000);
    return r.code === 0;
  } catch {
    return false;
  }
}

runPlugin('voice-out', (ctx) => {
  const env = process.env;
  const wanted = (env.SERVICE_TTS_ENGINE ?? 'auto').trim();
  const espeakPath = env.SERVICE_ESPEAK_PATH?.trim() || 'espeak-ng';
  const ttsBase = env.SERVICE_TTS_BASE_URL?.trim() ?? '';
  const ttsModel = env.SERVICE_TTS_MODEL?.trim() || 'tts-1';
  const fixedVoice = env.SERVICE_TTS_VOICE?.trim() ?? '';
  const client = ttsBase
    ? new OpenAI({
        baseURL: ttsBase,
        apiKey: env.SERVICE_TTS_KEY || env.SERVICE_LLM_KEY || 'unused',
        maxRetries: 0,
        timeout: Number(env.SERVICE_TTS_TIMEOUT_MS ?? 20_000),
      })
    : null;
  const backoff = new Backoff('the speech server');
  const wasm = new WasmEspeak();

  let engine: Promise<Engine | string> | null = null;
  /** Resolves to the engine, or to a string saying why none is usable. */
  const pick = (): Promise<Engine | string> =>
    (engine ??= (async () => {
      switch (wanted) {
        case 'openai':
          return client ? 'openai' : 'SERVICE_TTS_ENGINE=openai needs SERVICE_TTS_BASE_URL (an OpenAI-compatible server with /audio/speech)';
        case 'espeak':
          return (await binaryWorks(espeakPath))
            ? 'espeak'
            : `the espeak-ng binary "${espeakPath}" does not run; install it (apt-get install espeak-ng) or set SERVICE_TTS_ENGINE=espeak-wasm`;
        case 'espeak-wasm':
          return 'espeak-wasm';
        case 'auto':
          if (client) return 'openai';
          return (await binaryWorks(espeakPath)) ? 'espeak' : 'espeak-wasm';
        default:
          return `SERVICE_TTS_ENGINE must be auto, openai, espeak or espeak-wasm, got "${wanted}"`;
      }
    })());

  const synthesizeWith = async (e: Engine, text: string, voice: VoiceParam, out: string): Promise<Uint8Array> => {
    if (e === 'openai') {
      backoff.check();
      try {
        const res = await client!.audio.speech.create({ model: ttsModel, voice: (fixedVoice || voice.named) as 'alloy', input: text, response_format: 'wav' });
        const bytes = new Uint8Array(await res.arrayBuffer());
        backoff.succeeded();
        return bytes;
      } catch (err) {
        throw err instanceof PluginError ? err : backoff.failed(err);
      }
    }
    if (e === 'espeak') {
      const r = await run(espeakPath, ['--stdin', ...espeakArgs(voice, out)], text, 20_000);
      if (r.code !== 0) throw new PluginError('internal', `espeak-ng failed (exit ${r.code}): ${r.stderr.trim().slice(0, 200)}`);
      return readFile(out);
    }
    return wasm.synth(text, voice);
  };

  return {
    async health(): Promise<HealthResult> {
      const e = await pick();
      const info: HealthResult['info'] = { engine_setting: wanted };
      if (!isEngine(e)) return { ok: false, problems: [e], info };
      info.engine = e;
      if (e === 'openai') {
        info.base_url = ttsBase;
        info.model = ttsModel;
        try {
          await client!.models.list({ timeout: 5000 });
        } catch (err) {
          const status = (err as { status?: unknown }).status;
          if (status === 401 || status === 403)
            return { ok: false, problems: [`the speech server at ${ttsBase} rejected the key (${status}); check SERVICE_TTS_KEY`], info };
          if (typeof status !== 'number') return { ok: false, problems: [`the speech server at ${ttsBase} is unreachable: ${describeError(err)}`], info };
        }
        return { ok: true, problems: [], info };
      }
      const dir = await mkdtemp(join(tmpdir(), 'brainstem-tts-'));
      try {
        const out = join(dir, 'health.wav');
        const wav = await synthesizeWith(e, 'ready', { pitch: 50, speed: 170, variant: 'm1', named: 'alloy' }, out);
        const seconds = wavDuration(wav);
        info.test_duration_s = Math.round(seconds * 100) / 100;
        return seconds > 0 ? { ok: true, problems: [], info } : { ok: false, problems: [`${e} produced no audio`], info };
      } catch (err) {
        return { ok: false, problems: [`${e} is unavailable: ${err instanceof Error ? err.message : String(err)}`], info };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    async synthesize(p: SynthesizeParams): Promise<SynthesizeResult> {
      if (!SAFE_FILE.test(p.file) || basename(p.file) !== p.file) throw new PluginError('bad_request', `unsafe file name "${p.file}"`);
      const text = p.text.trim();
      if (!text) throw new PluginError('bad_request', 'nothing to say');
      const e = await pick();
      if (!isEngine(e)) throw new PluginError('unavailable', e, 60_000);
      // Node's recursive mkdir spins forever on a dir it cannot make (under /proc or /sys, behind a dangling link).
      await makeDir(p.dir, PRIVATE_DIR_MODE);
      const out = join(p.dir, p.file);
      const wav = await synthesizeWith(e, text, p.voice, out);
      const duration = wavDuration(wav);
      if (duration <= 0) throw new PluginError('internal', `${e} returned no usable WAV (${wav.byteLength} bytes)`);
      if (e !== 'espeak') await writeFile(out, wav);
      ctx.log('info', 'synthesised', { engine: e, file: p.file, seconds: Math.round(duration * 100) / 100 });
      return { file: p.file, bytes: wav.byteLength, duration_s: duration, characters: text.length, engine: e };
    },
  };
});
