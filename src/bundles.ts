import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { validateBundle } from '../brain/bundle.js';
import { withoutBom } from './http/codec.js';
import type { ConfigBundle, Problem } from '../brain/types.js';

/** A bundle directory holds one file, bundle.json, with a whole ConfigBundle. */
export const BUNDLE_FILE = 'bundle.json';

/** A loaded bundle carries bundle.json's text as read, which a signature covers. */
export type BundleLoad = { ok: true; bundle: ConfigBundle; text: string } | { ok: false; problems: Problem[] };

/**
 * The bundle directory a user meant: the path itself, or the directory of a `bundle.json` named
 * directly (people point at the file as often as at its directory). Another file is an error that
 * says what a bundle is.
 */
export function bundleDirOf(path: string): string {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return path;
  }
  if (!isFile) return path;
  if (basename(path) === BUNDLE_FILE) return dirname(path);
  throw new Error(`${path} is a file; a bundle is a directory holding ${BUNDLE_FILE}`);
}

export async function loadBundleDir(dir: string): Promise<BundleLoad> {
  const file = join(dir, BUNDLE_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, problems: [{ path: '', message: code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${code}` }] };
  }
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text));
  } catch (err) {
    return { ok: false, problems: [{ path: '', message: `${file} is not valid JSON: ${(err as Error).message}` }] };
  }
  const check = validateBundle(value);
  return check.ok ? { ok: true, bundle: check.bundle, text } : { ok: false, problems: check.problems };
}
