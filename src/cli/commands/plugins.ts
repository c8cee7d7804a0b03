import type { Command } from 'commander';
import type { PluginName } from '../../dialogue/supervisor.js';
import { CliError, parseInteger, printJson } from '../util.js';

const PLUGINS: readonly PluginName[] = ['dialogue', 'voice-out', 'voice-in'];

export interface PluginCheck {
  name: PluginName;
  /** ok: healthy; problem: something is wrong; off: not configured and not asked for. */
  status: 'ok' | 'problem' | 'off';
  problems: string[];
  info: Record<string, string | number | boolean>;
}

/** Plugins the environment mentions at all: a half-configured one is checked, so its missing variable is named. */
function mentioned(env: NodeJS.ProcessEnv): Record<PluginName, boolean> {
  const set = (k: string): boolean => (env[k] ?? '').trim() !== '';
  return {
    dialogue: set('SERVICE_LLM_BASE_URL') || set('SERVICE_LLM_MODEL') || set('SERVICE_LLM_KEY'),
    'voice-out': (env.SERVICE_TTS_ENGINE ?? '').trim() !== 'off',
    'voice-in': set('SERVICE_STT_BASE_URL') || set('SERVICE_STT_MODEL'),
  };
}

const OFF_HINT: Record<PluginName, string> = {
  dialogue: 'set SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL to let characters speak',
  'voice-out': 'SERVICE_TTS_ENGINE=off',
  'voice-in': 'set SERVICE_STT_BASE_URL (or SERVICE_STT_MODEL to use SERVICE_LLM_BASE_URL) for voice input',
};

/** Starts each plugin, asks it for health, and closes it. */
export async function checkPlugins(names: readonly PluginName[], env: NodeJS.ProcessEnv, timeoutMs: number, explicit: boolean): Promise<PluginCheck[]> {
  const wanted = mentioned(env);
  // Loaded here, not at the top: every command's start loads this module to register it.
  const { PluginRequestError, PluginSupervisor } = await import('../../dialogue/supervisor.js');
  return Promise.all(
    names.map(async (name): Promise<PluginCheck> => {
      if (!explicit && !wanted[name]) return { name, status: 'off', problems: [], info: { hint: OFF_HINT[name] } };
      const s = new PluginSupervisor({ name, env, requestTimeoutMs: timeoutMs, startTimeoutMs: timeoutMs, backoffMs: 60_000 });
      try {
        const h = await s.request('health', {});
        return { name, status: h.ok ? 'ok' : 'problem', problems: h.problems, info: h.info };
      } catch (err) {
        const why =
          err instanceof PluginRequestError && err.code === 'timeout'
            ? `no health answer within ${timeoutMs} ms`
            : err instanceof Error
              ? err.message
              : String(err);
        return { name, status: 'problem', problems: [`the ${name} plugin did not answer: ${why}`], info: {} };
      } finally {
        await s.close();
      }
    }),
  );
}

function print(checks: readonly PluginCheck[]): void {
  for (const c of checks) {
    const facts = Object.entries(c.info)
      .filter(([k]) => k !== 'hint')
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const head = `${c.name.padEnd(10)} ${c.status === 'ok' ? 'ok' : c.status === 'off' ? 'off' : 'FAIL'}`;
    if (c.status === 'off') process.stdout.write(`${head.padEnd(16)} ${String(c.info.hint ?? '')}\n`);
    else process.stdout.write(`${head.padEnd(16)} ${facts}\n`);
    for (const p of c.problems) process.stdout.write(`${''.padEnd(16)} - ${p}\n`);
  }
}

export function registerPlugins(program: Command): void {
  const plugins = program.command('plugins').description('the sidecar add-ons run as child processes: dialogue, voice-out, voice-in');
  plugins
    .command('doctor')
    .description('start each configured plugin, ask it for health and say what is wrong (exit 1 when anything is)')
    .option('--plugin <name...>', `check only these (${PLUGINS.join(', ')}), configured or not`)
    .option('--timeout <ms>', 'how long each plugin may take to start and answer', '15000')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { plugin?: string[]; timeout: string; json?: boolean }) => {
      const timeoutMs = parseInteger(opts.timeout, '--timeout', 100, 600_000);
      for (const n of opts.plugin ?? []) {
        if (!PLUGINS.includes(n as PluginName)) throw new CliError(`--plugin must be one of ${PLUGINS.join(', ')}, got "${n}"`);
      }
      const names = (opts.plugin as PluginName[] | undefined) ?? PLUGINS;
      const checks = await checkPlugins(names, process.env, timeoutMs, opts.plugin !== undefined);
      const ok = checks.every((c) => c.status !== 'problem');
      if (opts.json) printJson({ ok, plugins: checks });
      else print(checks);
      if (!ok) process.exitCode = 1;
    });
}
