import type { PluginName } from './supervisor.js';

// Apart from create.ts so that the CLI reads the environment without loading the dialogue tier.

/** Which plugins the environment turns on. (`plugins doctor` also checks half-configured ones, to name what is missing.) */
export function configuredPlugins(env: NodeJS.ProcessEnv): Record<PluginName, boolean> {
  const set = (k: string): boolean => (env[k] ?? '').trim() !== '';
  return {
    dialogue: set('SERVICE_LLM_BASE_URL') && set('SERVICE_LLM_MODEL'),
    'voice-out': (env.SERVICE_TTS_ENGINE ?? '').trim() !== 'off',
    'voice-in': set('SERVICE_STT_BASE_URL') || set('SERVICE_STT_MODEL'),
  };
}
