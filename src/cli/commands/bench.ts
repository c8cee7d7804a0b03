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
