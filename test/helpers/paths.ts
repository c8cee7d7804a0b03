import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// For its effect: the processes a test file spawns die with it (a file cut by the runner's timeout left them running).
import './children.js';

/** The repository root, from a compiled test file at dist/test/... */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const fixtures = join(repoRoot, 'test', 'fixtures');
export const cli = join(repoRoot, 'bin', 'brainstem');

/** A fresh temp directory, removed when the returned dispose runs. */
export function tempDir(prefix = 'brainstem-'): { path: string; dispose(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  // Retries: a server under test may still be writing its last file when the test disposes the dir (ENOTEMPTY).
  return { path, dispose: () => rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }) };
}

/**
 * The real CLI as a child process, without blocking: a server under test in this process
 * keeps answering while it runs (spawnSync would stall it).
 */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
