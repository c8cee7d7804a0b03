import { basename, dirname } from 'node:path';
import { configuredPlugins } from '../dialogue/configured.js';
import { PluginSupervisor } from '../dialogue/supervisor.js';
import type { Logger } from '../log.js';

/** The voice of property tours: espeak's female variant at a calm pace (an OpenAI-compatible server's "nova"). */
const TOUR_VOICE = { pitch: 45, speed: 150, variant: 'f2', named: 'nova' };

/**
 * Voice-overs of property videos, read by the voice-out add-on (the same plugin the sidecar's
 * characters speak with: espeak-ng, its WebAssembly build offline, or an OpenAI-compatible
 * speech server). Started on first use; null when SERVICE_TTS_ENGINE=off.
 */
export function createVoiceOver(
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): { speak: (text: string, outFile: string) => Promise<void>; close: () => Promise<void> } | null {
  if (!configuredPlugins(env)['voice-out']) return null;
  const supervisor = new PluginSupervisor({ name: 'voice-out', env, logger, requestTimeoutMs: 60_000, concurrency: 1 });
  return {
    async speak(text, outFile) {
      await supervisor.request('synthesize', { text, file: basename(outFile), dir: dirname(outFile), voice: TOUR_VOICE });
    },
    close: () => supervisor.close(),
  };
}
