import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeOpenAI } from '../../bench/fake-openai.js';
import { tempDir } from '../helpers/paths.js';
import { startTest } from '../sidecar/helpers.js';
import { drive, requestsFor } from './route-fuzz-harness.js';

async function fuzzSidecar(workers: number): Promise<void> {
  const fake = await startFakeOpenAI();
  const audio = tempDir('brainstem-audio-');
  const env = {
    ...process.env,
    SERVICE_LLM_BASE_URL: fake.baseUrl,
    SERVICE_LLM_MODEL: 'fake-model',
    SERVICE_LLM_KEY: 'sk-test',
    SERVICE_TTS_ENGINE: 'openai',
    SERVICE_TTS_BASE_URL: fake.baseUrl,
  };
  // With an access log, so every response is also driven through the request observer's wrappers.
  const observed: number[] = [];
  const sidecar = await startTest({ token: 'secret', workers, dialogue: { env, audioDir: audio.path }, accessLog: (r) => observed.push(r.status) });
  try {
    const routes = sidecar.routes();
    for (const expected of ['/health', '/tick', '/ticks', '/status', '/metrics', '/voice/:agent'])
      assert.ok(
        routes.some((r) => r.pattern === expected),
        expected,
      );
    const port = Number(new URL(sidecar.url).port);
    const problems: string[] = [];
    for (const route of routes)
      await drive(
        port,
        requestsFor(
          route,
          () => '7',
          () => ({ authorization: 'Bearer secret' }),
        ),
        problems,
      );
    assert.deepEqual(problems, []);
    assert.ok(observed.length > 0 && observed.every((status) => status < 500 || status === 503), `observed statuses ${[...new Set(observed)].join()}`);

    const health = await fetch(`${sidecar.url}/health`);
    assert.equal(await health.text(), 'ok');
  } finally {
    await sidecar.close();
    await fake.close();
    audio.dispose();
  }
}

test('every route of a sidecar with dialogue, voice and a token answers malformed input in the error shape, and the process goes on', () => fuzzSidecar(0));

// With workers the tick routes answer from promise continuations (the pools' replies), not
// from the batch of the event-loop turn: other code, the same guarantees.
test('every route of a sidecar with workers, dialogue, voice and a token answers malformed input in the error shape, and the process goes on', () =>
  fuzzSidecar(1));
