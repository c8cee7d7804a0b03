import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeOpenAI } from '../../bench/fake-openai.js';
import { spawnCli, stop, waitFor } from '../stack/helpers.js';
import { freePort } from '../helpers/taken-port.js';

test('a sidecar with dialogue on checks its model server at start: unreachable → one warning naming the URL; it still starts and answers ticks', async () => {
  const url = `http://127.0.0.1:${await freePort()}/v1`;
  const run = await spawnCli(['sidecar', '--addr', '127.0.0.1:0', '--state', ''], /listening on (http:\/\/\S+)/, {
    env: { SERVICE_LLM_BASE_URL: url, SERVICE_LLM_MODEL: 'some-model' },
  });
  try {
    const line = await waitFor('the model-server warning', async () => run.stderr.find((l) => l.includes('dialogue model server')));
    const entry = JSON.parse(line) as { level: string; msg: string; url: string };
    assert.equal(entry.level, 'warn');
    assert.match(
      entry.msg,
      new RegExp(`dialogue model server ${url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} unreachable \\(ECONNREFUSED\\); the sidecar runs`),
    );
    assert.equal(run.stderr.filter((l) => l.includes('dialogue model server')).length, 1);
    assert.equal((await fetch(`${run.match[1]}/health`)).status, 200);
  } finally {
    await stop(run.child);
  }
});

test('a model server that does not serve the configured model is named in the warning, with the models it does serve', async () => {
  const fake = await startFakeOpenAI();
  try {
    const run = await spawnCli(['sidecar', '--addr', '127.0.0.1:0', '--state', ''], /listening on/, {
      env: { SERVICE_LLM_BASE_URL: fake.baseUrl, SERVICE_LLM_MODEL: 'gpt-typo' },
    });
    try {
      const line = await waitFor('the model-server warning', async () => run.stderr.find((l) => l.includes('dialogue model server')));
      assert.match(JSON.parse(line).msg, /does not serve the model "gpt-typo" \(SERVICE_LLM_MODEL\); it serves: fake-model/);
    } finally {
      await stop(run.child);
    }
    // The right model: no warning.
    const ok = await spawnCli(['sidecar', '--addr', '127.0.0.1:0', '--state', ''], /listening on/, {
      env: { SERVICE_LLM_BASE_URL: fake.baseUrl, SERVICE_LLM_MODEL: 'fake-model' },
    });
    try {
      await waitFor('the model list asked for', async () => (fake.hits('models') >= 2 ? true : undefined));
      assert.equal(ok.stderr.filter((l) => l.includes('dialogue model server')).length, 0);
    } finally {
      await stop(ok.child);
    }
  } finally {
    await fake.close();
  }
});
