import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../store/files.js';
import { STATE_FORMAT, STATE_VERSION } from '../../../brain/state-io.js';
import type { Logger } from '../../log.js';
import type { Evaluator } from '../tick/evaluator.js';
import { makeDir } from '../../store/make-dir.js';

/** Name of the brain state file. */
export const STATE_FILE = 'brain-state.json';

/**
 * The brain state file when none is given: `.brainstem/brain-state.json` in the data
 * directory (the working directory unless one is given), never inside a bundle directory (one
 * may be read-only or shared by several sidecars); a sidecar on a control plane keeps it in
 * its own state directory instead.
 */
export function defaultStateFile(dataDir = process.cwd(), stateDir: string | null = null): string {
  return stateDir === null ? resolve(dataDir, '.brainstem', STATE_FILE) : join(stateDir, STATE_FILE);
}

/** Reads a state file: null when there is none; throws when it cannot be read or is not JSON. */
export async function readStateFile(path: string): Promise<unknown | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return JSON.parse(text) as unknown;
}

/**
 * Writes a brain state document ({format, version, agents}) from the agents' JSON pieces,
 * owner-only (0600, its directory created 0700 when missing), atomically: a temp file in the same directory, then a rename over the old one, so a crash
 * mid-write leaves the previous file whole.
 */
export async function writeStateFile(path: string, agents: AsyncIterable<string>): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  await makeDir(dirname(path), PRIVATE_DIR_MODE);
  try {
    const file = await open(temp, 'w', PRIVATE_FILE_MODE);
    try {
      await file.write(`{"format":${JSON.stringify(STATE_FORMAT)},"version":${STATE_VERSION},"agents":[`);
      let first = true;
      for await (const piece of agents) {
        await file.write(first ? piece : `,${piece}`);
        first = false;
      }
      await file.write(']}');
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/**
 * Keeps the brains' memory across restarts: restores it at start (a bad file is logged and
 * ignored), saves it every `everyMs` when ticks were answered since the last save, and once
 * more on close. Saves never overlap.
 */
export class StateKeeper {
  private timer: NodeJS.Timeout | null = null;
  private saving: Promise<void> | null = null;
  private savedAt = -1;

  constructor(
    readonly path: string,
    private readonly evaluator: Evaluator,
    private readonly logger: Logger,
    /** Monotonic count of answered ticks: no change, no save. */
    private readonly progress: () => number,
  ) {}

  /** Imports the file when there is a valid one; resolves with the agents restored (0 otherwise). */
  async restore(): Promise<number> {
    try {
      const state = await readStateFile(this.path);
      if (state === null) return 0;
      const agents = await this.evaluator.importState(state);
      this.logger.info('brain state restored', { file: this.path, agents });
      return agents;
    } catch (err) {
      this.logger.warn('brain state file ignored; starting with fresh memory', { file: this.path, error: err instanceof Error ? err.message : String(err) });
      return 0;
    }
  }

  start(everyMs: number): void {
    this.savedAt = this.progress();
    this.timer = setInterval(() => {
      if (this.progress() !== this.savedAt) void this.save();
    }, everyMs);
    this.timer.unref();
  }

  /** Saves now (joins a save under way); failures are logged, never thrown. */
  save(): Promise<void> {
    return (this.saving ??= (async () => {
      const at = this.progress();
      try {
        await writeStateFile(this.path, this.evaluator.exportAgents());
        this.savedAt = at;
      } catch (err) {
        this.logger.error('brain state not saved', { file: this.path, error: err instanceof Error ? err.message : String(err) });
      } finally {
        this.saving = null;
      }
    })());
  }

  /** Stops the timer and writes a last time. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.saving;
    await this.save();
  }
}
