import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import type { LineSource, Synthesizer, Transcriber } from './context.js';
import { ScriptedLines } from './scripted-lines.js';
import { PluginSupervisor, type PluginName, type SupervisorOptions } from './supervisor.js';
import { DialogueTier, type DialogueBundle, type DialogueTierOptions } from './tier.js';
import { configuredPlugins } from './configured.js';

export interface CreateDialogueTierOptions extends Omit<DialogueTierOptions, 'lines' | 'voiceOut' | 'voiceIn' | 'onClose' | 'bundle' | 'ttsUsdPerMChar'> {
  bundle: DialogueBundle;
  env?: NodeJS.ProcessEnv;
  /** Passed to each PluginSupervisor (timeouts, back-off, queue bound); overrides the per-plugin defaults. */
  supervisor?: Omit<SupervisorOptions, 'name' | 'env' | 'logger' | 'now'>;
  /** Script per plugin, for tests; default dist/plugins/<name>.js. */
  scripts?: Partial<Record<PluginName, string>>;
  /**
   * `--demo-dialogue`: lines come from the built-in scripted source (ScriptedLines, seeded
   * from the bundle's flavor.seed) instead of the dialogue plugin, so characters talk without
   * a model; SERVICE_LLM_* is then not used. Limits, cache, counters and economy are the same.
   */
  scripted?: boolean;
  logger?: Logger;
}

/**
 * The dialogue tier as the sidecar runs it: a supervisor per configured plugin (started on
 * first use), wired to a DialogueTier. With no SERVICE_LLM_* the tier is built but silent,
 * unless `scripted` gives it the built-in line source.
 */
export function createDialogueTier(options: CreateDialogueTierOptions): DialogueTier {
  const env = options.env ?? process.env;
  const logger = options.logger ?? silentLogger;
  const wanted = configuredPlugins(env);
  const supervisors: PluginSupervisor[] = [];
  const start = (name: PluginName, extra: Partial<SupervisorOptions> = {}): PluginSupervisor => {
    const s = new PluginSupervisor({
      ...extra,
      ...options.supervisor,
      name,
      env,
      logger,
      ...(options.now ? { now: options.now } : {}),
      ...(options.scripts?.[name] ? { script: options.scripts[name] } : {}),
    });
    supervisors.push(s);
    return s;
  };
  const concurrency = Number(env.SERVICE_LLM_CONCURRENCY ?? 8);
  const dialogue =
    wanted.dialogue && !options.scripted
      ? start('dialogue', Number.isInteger(concurrency) && concurrency > 0 ? { concurrency, maxQueue: Math.max(32, concurrency * 8) } : {})
      : null;
  // Synthesis and transcription are slower than a chat line; they get longer timeouts.
  const voiceOut = wanted['voice-out'] && options.audioDir ? start('voice-out', { requestTimeoutMs: 30_000, concurrency: 2 }) : null;
  const voiceIn = wanted['voice-in'] && options.audioDir ? start('voice-in', { requestTimeoutMs: 45_000, concurrency: 2 }) : null;
  const lines: LineSource | null = options.scripted
    ? new ScriptedLines(options.bundle.flavor.seed)
    : dialogue
      ? { line: (p) => dialogue.request('line', p) }
      : null;
  const synth: Synthesizer | null = voiceOut ? { synthesize: (p) => voiceOut.request('synthesize', p) } : null;
  const stt: Transcriber | null = voiceIn ? { transcribe: (p) => voiceIn.request('transcribe', p) } : null;
  const price = Number(env.SERVICE_TTS_PRICE_PER_MCHAR ?? 0);
  const { env: _env, supervisor: _sup, scripts: _scripts, scripted: _scripted, ...tierOptions } = options;
  const model = env.SERVICE_LLM_MODEL?.trim();
  return new DialogueTier({
    ...tierOptions,
    logger,
    lines,
    linesFrom: options.scripted ? { source: 'demo' } : dialogue ? { source: 'model', ...(model ? { model: model.slice(0, 200) } : {}) } : { source: 'none' },
    voiceOut: synth,
    voiceIn: stt,
    ttsUsdPerMChar: Number.isFinite(price) && price > 0 ? price : 0,
    onClose: async () => {
      await Promise.all(supervisors.map((s) => s.close()));
    },
  });
}
