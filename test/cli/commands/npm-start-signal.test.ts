import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../../helpers/paths.js';

const BUILD_STEP = 'npm run build && ';

/**
 * Regression: `npm start` signalled by its pid (as process supervisors do) left `brainstem up`
 * running, because the shell npm starts did not pass the signal on. The script must exec the
 * stack so that npm's forwarded SIGTERM reaches it. The test runs npm on the script's tail (the
 * build step is left out so that the suite's own dist/ is not rebuilt under running tests).
 */
test('npm start: SIGTERM to npm stops brainstem up (no orphan left on the ports)', async () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  assert.ok(pkg.scripts.start.startsWith(BUILD_STEP), pkg.scripts.start);
  const tail = pkg.scripts.start.slice(BUILD_STEP.length);
  assert.match(tail, /^exec node bin\/brainstem up$/);

  const dir = tempDir();
  try {
    writeFileSync(
      join(dir.path, 'package.json'),
      JSON.stringify({
        name: 'start-probe',
        private: true,
        scripts: { start: tail.replace('bin/brainstem', JSON.stringify(join(repoRoot, 'bin', 'brainstem'))) },
      }),
    );
    const args = [
      'start',
      '--',
      '--addr',
      '127.0.0.1:0',
      '--sidecar-addr',
      '127.0.0.1:0',
      '--db',
      join(dir.path, 'db'),
      '--data',
      join(dir.path, 'data'),
      '--json',
    ];
    const npm = spawn('npm', args, { cwd: dir.path, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BRAINSTEM_LOG: 'silent' } });
    let out = '';
    const started = await new Promise<{ sidecar: string; dashboard: string }>((resolve, reject) => {
      npm.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { sidecar: string; dashboard: string });
      });
      npm.on('exit', (code) => reject(new Error(`npm exited ${code} before the stack started: ${out}`)));
    });
    assert.equal((await fetch(`${started.sidecar}/health`)).status, 200);
    const exited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
    npm.kill('SIGTERM');
    await exited;
    const stopped = async (url: string): Promise<boolean> => {
      for (let i = 0; i < 100; i++) {
        try {
          await fetch(url, { signal: AbortSignal.timeout(500) });
        } catch {
          return true;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    };
    assert.ok(await stopped(`${started.sidecar}/health`), 'the sidecar still answers after npm was stopped');
    assert.ok(await stopped(`${started.dashboard}health`), 'the embedded server still answers after npm was stopped');
  } finally {
    dir.dispose();
  }
});
