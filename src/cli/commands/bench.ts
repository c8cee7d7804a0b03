import type { Command } from 'commander';
import { registerBenchBrain } from './bench-brain.js';
import { registerBenchControlPlane } from './bench-control-plane.js';
import { registerBenchDialogue } from './bench-dialogue.js';
import { registerTickBench } from './bench-tick.js';
import { registerBenchVideo } from './bench-video.js';
import { registerBenchWebhooks } from './bench-webhooks.js';

/** Adds one benchmark as a subcommand of `brainstem bench`. */
export type RegisterBenchmark = (bench: Command) => void;

/** Every benchmark; another one adds its registrar here. */
export const benchmarks: RegisterBenchmark[] = [registerTickBench, registerBenchBrain, registerBenchControlPlane, registerBenchVideo, registerBenchWebhooks, registerBenchDialogue];

export function registerBench(program: Command): void {
  const bench = program.command('bench').description('benchmarks, each measured against a baseline in the same run');
  for (const register of benchmarks) register(bench);
}
