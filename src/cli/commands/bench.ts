import type { Command } from 'commander';
import { registerBenchBelievability } from './bench-believability.js';
import { registerBenchBrain } from './bench-brain.js';
import { registerBenchControlPlane } from './bench-control-plane.js';
import { registerBenchDialogue } from './bench-dialogue.js';
import { registerTickBench } from './bench-tick.js';
import { registerBenchVideo } from './bench-video.js';
import { registerBenchWebhooks } from './bench-webhooks.js';
import { registerBenchSoak } from './bench-soak.js';

/** Adds one benchmark as a subcommand of `brainstem bench`. */
export type RegisterBenchmark = (bench: Command) => void;

/** Every benchmark; another one adds its registrar here. */
export const benchmarks: RegisterBenchmark[] = [
  registerTickBench,
  registerBenchBrain,
  registerBenchControlPlane,
  registerBenchVideo,
  registerBenchWebhooks,
  registerBenchDialogue,
  registerBenchSoak,
  registerBenchBelievability,
];

export function registerBench(program: Command): void {
  const bench = program.command('bench').description('benchmarks, each measured against a baseline in the same run');
  for (const register of benchmarks) register(bench);
}
