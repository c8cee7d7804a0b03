import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUNDLE_FILE } from './bundle-dir.js';
import { validateBundle } from '../brain/bundle.js';
import { withoutBom } from './http/bom.js';
import { parseJson } from './http/codec.js';
import type { ConfigBundle, Problem } from '../brain/types.js';

/**
 * The largest bundle, measured on the form a publish stores: the validated bundle as compact
 * JSON, in UTF-8 bytes. `bundle validate` and a publish apply this one rule, so a file one
 * accepts the other never refuses for its size (the whitespace of a pretty-printed file does
 * not count; a publish's body may carry up to PUBLISH_MAX_BODY of it).
 */
export const MAX_BUNDLE_BYTES = 1024 * 1024;
/** The largest body a publish (PUT /v1/servers/{id}/config) reads: room for a bundle at MAX_BUNDLE_BYTES, pretty-printed. */
export const PUBLISH_MAX_BODY = 4 * MAX_BUNDLE_BYTES;

/** The size rule of MAX_BUNDLE_BYTES: null when the bundle fits, else the problem, with its size. */
export function bundleSizeProblem(bundle: ConfigBundle): Problem | null {
  const bytes = Buffer.byteLength(JSON.stringify(bundle));
  return bytes <= MAX_BUNDLE_BYTES
    ? null
    : { path: '', message: `the bundle is ${bytes} bytes as stored (compact JSON); at most ${MAX_BUNDLE_BYTES} bytes are accepted` };
}

/** A loaded bundle carries bundle.json's text as read, which a signature covers. */
export type BundleLoad = { ok: true; bundle: ConfigBundle; text: string } | { ok: false; problems: Problem[] };

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
  // The rules a publish's body meets besides JSON syntax (nesting depth, keys that could reach a
  // prototype), so a bundle that validates here is not refused when it is published.
  try {
    parseJson(text);
  } catch (err) {
    return { ok: false, problems: [{ path: '', message: `${file}: ${(err as Error).message}` }] };
  }
  const check = validateBundle(value);
  if (!check.ok) return { ok: false, problems: check.problems };
  const size = bundleSizeProblem(check.bundle);
  return size === null ? { ok: true, bundle: check.bundle, text } : { ok: false, problems: [size] };
}
