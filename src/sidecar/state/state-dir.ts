import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../store/files.js';
import { makeDir } from '../../store/make-dir.js';

/** Files of the control-plane source's state directory. */
export const STATE_DIR_FILES = {
  /** The last bundle pulled, verified and applied, as served: `{etag, savedAt, body, keyId, signature}`. */
  bundle: 'bundle.json',
  /** The pinned bundle key and the highest bundle version applied: `{key, highestVersion}`. */
  trust: 'trust.json',
  /** Telemetry reports not yet acknowledged, one JSON object a line, oldest first. */
  telemetry: 'telemetry.jsonl',
  /** `{lastAcked, dropped}`: the reportId of the newest acknowledged report and how many were dropped over the cap. */
  cursor: 'telemetry-cursor.json',
} as const;

/** `.brainstem/sidecar-<serverId>/` in the data directory (the working directory unless one is given). */
export function defaultStateDir(serverId: string, dataDir = process.cwd()): string {
  return resolve(dataDir, '.brainstem', `sidecar-${serverId}`);
}

export async function ensureDir(dir: string): Promise<void> {
  await makeDir(dir, PRIVATE_DIR_MODE);
}

/** Writes a temp file beside `path`, then renames it over: a crash leaves the old file whole. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  try {
    await writeFile(temp, data, { mode: PRIVATE_FILE_MODE });
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/** The file's text, or null when it does not exist. */
export async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
