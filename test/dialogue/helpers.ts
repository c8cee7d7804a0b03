import { fileURLToPath } from 'node:url';
import type { LineParams } from '../../plugins/protocol.js';

/** The compiled scripted fixture plugin (see fixtures/scripted-plugin.ts). */
export const scriptedPlugin = fileURLToPath(new URL('./fixtures/scripted-plugin.js', import.meta.url));

/** LineParams for the scripted plugin: `kind` picks its behaviour, `doing` is echoed back. */
export function scripted(kind: string, doing = ''): LineParams {
  return {
    game: null,
    character: { name: 'Test', role: 'survivor', traits: {}, themes: [], goal: '', emotion: '' },
    flavor: '',
    memory: '',
    situation: { kind, doing, players: [], heard: [], event: '' },
    max_chars: 100,
  };
}

/** Resolves once pending I/O callbacks and promise jobs have run. */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Polls a condition across event-loop turns (not a sleep: it yields to I/O) until it holds or the budget ends. */
export async function until(cond: () => boolean, budgetMs = 10_000): Promise<void> {
  const end = Date.now() + budgetMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
