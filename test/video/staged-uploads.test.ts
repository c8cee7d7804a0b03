import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbedded } from '../../src/embedded/start.js';
import { STALE_UPLOAD_MS } from '../../src/video/index.js';
import { tempDir } from '../helpers/paths.js';

test('a start removes only staged uploads untouched for an hour: another process may be receiving into the same directory', async () => {
  const dir = tempDir();
  try {
    const options = { port: 0, db: join(dir.path, 'test.db'), adminToken: 'a'.repeat(32) };
    await (await startEmbedded(options)).close();
    const staged = join(dir.path, 'data', 'tmp');
    const abandoned = join(staged, 'abandoned.part');
    const live = join(staged, 'live.part');
    writeFileSync(abandoned, 'partial upload of a process killed long ago');
    writeFileSync(live, 'upload another process is receiving now');
    const past = (Date.now() - STALE_UPLOAD_MS - 60_000) / 1000;
    utimesSync(abandoned, past, past);
    await (await startEmbedded(options)).close();
    assert.equal(existsSync(abandoned), false);
    assert.equal(existsSync(live), true);
  } finally {
    dir.dispose();
  }
});
