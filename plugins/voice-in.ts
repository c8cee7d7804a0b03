/**
 * The voice-in plugin: transcribes a player's voice clip through an OpenAI-compatible
 * POST /audio/transcriptions (SERVICE_STT_BASE_URL, else SERVICE_LLM_BASE_URL;
 * SERVICE_STT_MODEL, default whisper-1; SERVICE_STT_KEY, else SERVICE_LLM_KEY).
 * The sidecar writes the clip to a file and passes its path; this plugin deletes it.
 */
import { readFile, unlink } from 'node:fs/promises';
import OpenAI, { toFile } from 'openai';
import { Backoff, PluginError, describeError, runPlugin, type HealthResult, type TranscribeParams, type TranscribeResult } from './protocol.js';

const EXT: Record<string, string> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/ogg': 'ogg', 'audio/webm': 'webm' };

runPlugin('voice-in', (ctx) => {
  const env = process.env;
  const base = (env.SERVICE_STT_BASE_URL || env.SERVICE_LLM_BASE_URL || '').trim();
  const model = env.SERVICE_STT_MODEL?.trim() || 'whisper-1';
  const language = env.SERVICE_STT_LANGUAGE?.trim() || undefined;
  const problems: string[] = [];
  if (!base)
    problems.push('SERVICE_STT_BASE_URL is not set (an OpenAI-compatible server with /audio/transcriptions; SERVICE_LLM_BASE_URL is used when it is unset)');
  else if (!/^https?:\/\//.test(base)) problems.push(`SERVICE_STT_BASE_URL must be an http(s) URL, got "${base}"`);
  const client = problems.length
    ? null
    : new OpenAI({
        baseURL: base,
        apiKey: env.SERVICE_STT_KEY || env.SERVICE_LLM_KEY || 'unused',
        maxRetries: 0,
        timeout: Number(env.SERVICE_STT_TIMEOUT_MS ?? 30_000),
      });
  const backoff = new Backoff('the transcription server');

  return {
    async health(): Promise<HealthResult> {
      const info: HealthResult['info'] = { model };
      if (!client) return { ok: false, problems, info };
      info.base_url = base;
      try {
        await client.models.list({ timeout: 5000 });
      } catch (err) {
        const status = (err as { status?: unknown }).status;
        if (status === 401 || status === 403)
          return { ok: false, problems: [`the transcription server at ${base} rejected the key (${status}); check SERVICE_STT_KEY`], info };
        if (typeof status !== 'number') return { ok: false, problems: [`the transcription server at ${base} is unreachable: ${describeError(err)}`], info };
      }
      return { ok: true, problems: [], info };
    },

    async transcribe(p: TranscribeParams): Promise<TranscribeResult> {
      try {
        if (!client) throw new PluginError('unavailable', problems.join('; '), 60_000);
        backoff.check();
        const audio = await readFile(p.path);
        const file = await toFile(audio, `clip.${EXT[p.mime] ?? 'wav'}`, { type: p.mime });
        let text: string;
        try {
          const res = await client.audio.transcriptions.create({ file, model, ...(language ? { language } : {}) });
          text = res.text;
        } catch (err) {
          const e = backoff.failed(err);
          ctx.log('warn', 'transcription failed', { code: e.code, message: e.message });
          throw e;
        }
        backoff.succeeded();
        return { text: text.trim() };
      } finally {
        await unlink(p.path).catch(() => {});
      }
    },
  };
});
