import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { spawnCli, tick } from '../stack/helpers.js';

/**
 * Regression: Ctrl-C on `npm start` reaches `brainstem up` twice (from the terminal's process
 * group, and again from npm passing it on). The second SIGINT used to kill the process in the
 * middle of its shutdown: the brains' memory unsaved, the SQLite lock left behind.
 */
test('up: a second SIGINT while it stops (Ctrl-C on npm start) does not cut the shutdown short', async () => {
  const dir = tempDir();
  try {
    const up = await spawnCli(['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--data-dir', dir.path, '--json'], /^\{/, {
      env: { BRAINSTEM_LOG: 'info' },
    });
    const started = JSON.parse(up.match.input) as { sidecar: string; brainToken: string; db: string };
    const answer = await fetch(`${started.sidecar}/tick`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${started.brainToken}` },
      body: JSON.stringify(tick(4242)),
    });
    assert.equal(answer.status, 200);
    const exited = once(up.child, 'exit');
    // npm passes the signal on once it has its own: the second comes while brainstem stops.
    // (Two sent at once would merge into one pending signal.)
    const stopping = new Promise<void>((resolve) => up.child.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('shutting down') && resolve()));
    up.child.kill('SIGINT');
    await stopping;
    up.child.kill('SIGINT');
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, up.stderr.join('\n'));
    assert.equal(existsSync(`${started.db}.lock`), false, 'the lock is released');
    const state = readFileSync(join(dir.path, '.brainstem', 'sidecar-1', 'brain-state.json'), 'utf8');
    assert.match(state, /4242/, 'the character the sidecar answered is in the saved memory');
  } finally {
    dir.dispose();
  }
});
