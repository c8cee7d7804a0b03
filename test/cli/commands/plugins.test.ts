import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cli } from '../../helpers/paths.js';
import { startFakeOpenAI } from '../../../bench/fake-openai.js';
import { freePort } from '../../helpers/taken-port.js';

function doctor(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'plugins', 'doctor', ...args], { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Report {
  ok: boolean;
  plugins: Array<{ name: string; status: string; problems: string[]; info: Record<string, unknown> }>;
}

test('plugins doctor: every plugin healthy against a working server → exit 0', async () => {
  const fake = await startFakeOpenAI();
  try {
    const r = await doctor(['--json'], {
      SERVICE_LLM_BASE_URL: fake.baseUrl,
      SERVICE_LLM_MODEL: 'gpt-4o-mini',
      SERVICE_STT_BASE_URL: fake.baseUrl,
      SERVICE_TTS_ENGINE: 'espeak-wasm',
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.equal(report.ok, true);
    assert.deepEqual(
      report.plugins.map((p) => [p.name, p.status]),
      [
        ['dialogue', 'ok'],
        ['voice-out', 'ok'],
        ['voice-in', 'ok'],
      ],
    );
    const dialogue = report.plugins[0]!;
    assert.equal(dialogue.info.model_listed, false);
    assert.equal(dialogue.info.price_input_per_mtok, 0.15);
    assert.equal(report.plugins[1]!.info.engine, 'espeak-wasm');
  } finally {
    await fake.close();
  }
});

test('plugins doctor names what is wrong: unreachable server, unusable engine → exit 1', async () => {
  const port = await freePort();
  const r = await doctor(['--json'], {
    SERVICE_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`,
    SERVICE_LLM_MODEL: 'm',
    SERVICE_STT_MODEL: 'whisper-1',
    SERVICE_TTS_ENGINE: 'espeak',
    SERVICE_ESPEAK_PATH: '/nonexistent/espeak-ng',
  });
  assert.equal(r.code, 1);
  const report = JSON.parse(r.stdout) as Report;
  assert.equal(report.ok, false);
  const [dialogue, voiceOut, voiceIn] = report.plugins;
  assert.match(dialogue!.problems.join('\n'), /model server at .* is unreachable: .*ECONNREFUSED/);
  assert.match(voiceOut!.problems.join('\n'), /espeak-ng binary .* does not run/);
  assert.match(voiceIn!.problems.join('\n'), /transcription server at .* is unreachable: .*ECONNREFUSED/, 'voice-in falls back to SERVICE_LLM_BASE_URL');
});

test('plugins doctor: unconfigured plugins are off (exit 0) unless named, then the missing env is named', async () => {
  const r = await doctor([], { SERVICE_TTS_ENGINE: 'off' });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^dialogue\s+off\s+set SERVICE_LLM_BASE_URL/m);
  const named = await doctor(['--plugin', 'dialogue'], {});
  assert.equal(named.code, 1);
  assert.match(named.stdout, /^dialogue\s+FAIL/m);
  assert.match(named.stdout, /- SERVICE_LLM_BASE_URL is not set/);
  const bad = await doctor(['--plugin', 'speech'], {});
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--plugin must be one of dialogue, voice-out, voice-in/);
});
