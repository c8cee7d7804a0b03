import type { Command } from 'commander';
import { registerBenchBelievability } from './bench-believability.js';
import { registerBenchBrain } from './bench-brain.js';
import { registerBenchControlPlane } from './bench-control-plane.js';
import { registerBenchConfigPush } from './bench-config-push.js';
import { registerBenchDialogue } from './bench-dialogue.js';
import { registerBenchMods } from './bench-mods.js';
import { registerTickBench } from './bench-tick.js';
import { registerBenchVideo } from './bench-video.js';
import { registerBenchWebhooks } from './bench-webhooks.js';
import { registerBenchWidget } from './bench-widget.js';
import { registerBenchSoak } from './bench-soak.js';
import { timedProgress } from '../progress.js';

/** Adds one benchmark as a subcommand of `brainstem bench`. */
export type RegisterBenchmark = (bench: Command) => void;

/** Every benchmark; another one adds its registrar here. */
export const benchmarks: RegisterBenchmark[] = [
  registerTickBench,
  registerBenchBrain,
  registerBenchControlPlane,
  registerBenchConfigPush,
  registerBenchVideo,
  registerBenchWebhooks,
  registerBenchWidget,
  registerBenchDialogue,
  registerBenchSoak,
  registerBenchBelievability,
  registerBenchMods,
];

export function registerBench(program: Command): void {
  const bench = program.command('bench').description('benchmarks, each measured against a baseline in the same run');
  for (const register of benchmarks) register(bench);
  // With --json, stdout carries the JSON result alone: anything a benchmark or a library it
  // loads prints through console goes to stderr instead, where the progress lines already go.
  bench.hook('preAction', (_bench, action) => {
    if (action.opts().json === true) jsonOnlyStdout();
  });
  // Every benchmark runs for minutes: one line says how long it has run and, where its flags
  // tell, about how long it has left (on a terminal rewritten in place, elsewhere every few
  // seconds, nothing with --json). `bench believability` counts its own steps instead.
  let ended: (() => void) | null = null;
  bench.hook('preAction', (_bench, action) => {
    if (action.name() === 'believability') return;
    ended = timedProgress(`bench ${action.name()}`, expectedSeconds(action.name(), action.opts()), action.opts().json === true);
  });
  bench.hook('postAction', () => {
    ended?.();
    ended = null;
  });
}

/**
 * About how long a benchmark takes, from its flags, where its phases are timed runs; null
 * where it depends on the machine (renders, deliveries, corpus builds).
 */
export function expectedSeconds(name: string, opts: Record<string, unknown>): number | null {
  const n = (key: string, fallback: number): number => {
    const v = Number(opts[key]);
    return Number.isFinite(v) && v >= 0 ? v : fallback;
  };
  switch (name) {
    case 'control-plane':
      // Each round: the baseline and two scenarios, each a timed wrk run after its signed pool is written.
      return opts.database === undefined ? n('rounds', 3) * 3 * (n('duration', 5) + 2) : null;
    case 'soak':
      return n('duration', 600) + 2 * n('baseline', 30);
    default:
      return null;
  }
}

/** Sends console.log, info and debug to stderr for the rest of the process. */
export function jsonOnlyStdout(): void {
  const toStderr = (...args: unknown[]): void => {
    console.error(...args);
  };
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
