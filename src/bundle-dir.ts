import { statSync } from 'node:fs';
import { basename, dirname } from 'node:path';

// Apart from bundles.ts so that the CLI names and finds a bundle directory without loading the
// bundle rules and MessagePack (every command's start registers `bundle` and `config`).

/** A bundle directory holds one file, bundle.json, with a whole ConfigBundle. */
export const BUNDLE_FILE = 'bundle.json';

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
