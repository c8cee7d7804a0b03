import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeOpenAI, tinyWav } from '../../bench/fake-openai.js';
import { PluginRequestError, PluginSupervisor } from '../../src/dialogue/supervisor.js';
import { tempDir } from '../helpers/paths.js';

/**
 * voice-out makes the directory it writes to. Node's recursive mkdir never returns for a
 * directory under /proc or /sys (ENOENT, then EEXIST of the parent, forever, at 100 % CPU):
 * the plugin then hung each synthesize until the supervisor's timeout and kept a core busy.
 */

const VOICE = { pitch: 40, speed: 160, variant: 'f2', named: 'nova' } as const;

async function withPlugin(run: (s: PluginSupervisor) => Promise<void>): Promise<void> {
  const fake = await startFakeOpenAI();
  const s = new PluginSupervisor({
    name: 'voice-out',
    env: { ...process.env, SERVICE_TTS_ENGINE: 'openai', SERVICE_TTS_BASE_URL: fake.baseUrl },
    requestTimeoutMs: 30_000,
  });
  try {
    await run(s);
  } finally {
    await s.close();
    await fake.close();
  }
}

test('voice-out makes a missing nested directory, owner-only, and writes the line there', async () => {
  const dir = tempDir();
  try {
    await withPlugin(async (s) => {
      const target = join(dir.path, 'a', 'b');
      const result = await s.request('synthesize', { text: 'Halt.', file: 'l_1.wav', dir: target, voice: VOICE });
      assert.deepEqual(readFileSync(join(target, result.file)), tinyWav());
      assert.equal(statSync(join(dir.path, 'a')).mode & 0o777, 0o700);
    });
  } finally {
    dir.dispose();
  }
});

test(
  'voice-out answers an error for a directory that cannot be made under /proc, rather than spinning',
  { skip: existsSync('/proc/self') ? false : 'needs /proc' },
  async () => {
    await withPlugin(async (s) => {
      const err = await s.request('synthesize', { text: 'Halt.', file: 'l_1.wav', dir: '/proc/brainstem-no-such/audio', voice: VOICE }).then(
        () => assert.fail('synthesize into /proc succeeded'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof PluginRequestError, String(err));
      assert.notEqual(err.code, 'timeout');
      assert.match(err.message, /ENOENT/);
      // The plugin is still there and answers the next line.
      assert.equal((await s.request('health', {})).ok, true);
    });
  },
);
