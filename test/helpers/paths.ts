import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from a compiled test file at dist/test/... */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const fixtures = join(repoRoot, 'test', 'fixtures');
export const cli = join(repoRoot, 'bin', 'brainstem');

/** A fresh temp directory, removed when the returned dispose runs. */
export function tempDir(prefix = 'brainstem-'): { path: string; dispose(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) };
}
