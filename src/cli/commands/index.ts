import type { RegisterCommand } from '../util.js';

interface CommandEntry {
  /** The top-level commands its register function defines. */
  readonly names: readonly string[];
  readonly load: () => Promise<RegisterCommand>;
}

/**
 * Every CLI command, in the order --help lists them, each module loaded only when asked for: a
 * command line that names a command defines that one alone, so a spawned `config pull` or
 * `serve` does not evaluate the other commands' definitions and what they import.
 */
const COMMANDS: readonly CommandEntry[] = [
  { names: ['sidecar'], load: async () => (await import('./sidecar.js')).registerSidecar },
  { names: ['serve'], load: async () => (await import('./serve.js')).registerServe },
  { names: ['up'], load: async () => (await import('./up.js')).registerUp },
  { names: ['admin'], load: async () => (await import('./admin.js')).registerAdmin },
  { names: ['migrate-store'], load: async () => (await import('./migrate-store.js')).registerMigrateStore },
  { names: ['bundle'], load: async () => (await import('./bundle.js')).registerBundle },
  { names: ['keys'], load: async () => (await import('./keys.js')).registerKeys },
  { names: ['config'], load: async () => (await import('./config.js')).registerConfig },
  { names: ['webhooks'], load: async () => (await import('./webhooks.js')).registerWebhooks },
  { names: ['plugins'], load: async () => (await import('./plugins.js')).registerPlugins },
  { names: ['sim', 'replay'], load: async () => (await import('./sim.js')).registerSim },
  { names: ['bench'], load: async () => (await import('./bench.js')).registerBench },
];

/** Every command's definition, in --help order. */
export function loadCommands(): Promise<RegisterCommand[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}

/**
 * The definitions a command line needs: when its first argument is a command's name, that
 * command's alone (its parsing, errors and help never look at the others); otherwise (no
 * command, `--help`, `--version`, `help`, a mistyped name that commander answers with a
 * suggestion from every name) all of them, as before.
 */
export async function commandsFor(args: readonly string[]): Promise<RegisterCommand[]> {
  const named = COMMANDS.find((c) => c.names.includes(args[0] ?? ''));
  return named ? [await named.load()] : loadCommands();
}
