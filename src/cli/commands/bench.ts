import type { Command } from 'commander';
import { registerTickBench } from '../../../bench/tick/command.js';

/** Adds one benchmark as a subcommand of `brainstem bench`. */
export type RegisterBenchmark = (bench: Command) => void;

/** Every benchmark; another one adds its registrar here. */
export const benchmarks: RegisterBenchmark[] = [registerTickBench];

export function registerBench(program: Command): void {
  const bench = program.command('bench').description('benchmarks, each measured against a baseline in the same run');
  for (const register of benchmarks) register(bench);
}
