import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startFakeOpenAI } from '../../bench/fake-openai.js';
import { tempDir } from '../helpers/paths.js';
import { rawRequest } from '../helpers/raw-http.js';
import { spawnCli, stop } from '../stack/helpers.js';

// A path parameter with a malformed percent-encoding threw URIError outside any guard, and the
// process exited: on any route with a parameter, with no credentials needed.

test('serve: a malformed percent-encoding in a path parameter is a 400 and the process goes on', async () => {
  const dir = tempDir();
  const serve = await spawnCli(
    ['serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'b.db'), '--data', join(dir.path, 'data')],
    /listening on (http:\/\/\S+)/,
  );
  try {
    const port = Number(new URL(serve.match[1]!).port);
    for (const target of ['/v1/assets/%/file', '/v1/billing/offline/%ZZ/complete', '/v1/servers/%E0%A4%A']) {
      for (const method of ['GET', 'HEAD']) {
        const a = await rawRequest(port, { method, target });
        assert.equal(a.status, 400, `${method} ${target}`);
        if (method === 'GET') assert.equal(JSON.parse(a.body.toString()).error.code, 'bad_request');
      }
    }
    const health = await rawRequest(port, { method: 'GET', target: '/health' });
    assert.equal(health.body.toString(), 'ok');
    assert.equal(serve.child.exitCode, null);
  } finally {
    await stop(serve.child);
    dir.dispose();
  }
});

test('sidecar with dialogue and --token: POST /voice/%E0%A4%A is a 400 and the process goes on', async () => {
  const fake = await startFakeOpenAI();
  try {
    const sidecar = await spawnCli(['sidecar', '--addr', '127.0.0.1:0', '--token', 'secret'], /listening on (http:\/\/\S+)/, {
      env: { SERVICE_LLM_BASE_URL: fake.baseUrl, SERVICE_LLM_MODEL: 'fake-model', SERVICE_LLM_KEY: 'sk-test' },
    });
    try {
      assert.match(sidecar.lines[0]!, /dialogue on/);
      const port = Number(new URL(sidecar.match[1]!).port);
      for (const headers of [{}, { authorization: 'Bearer secret' }] as Record<string, string>[]) {
        const a = await rawRequest(port, { method: 'POST', target: '/voice/%E0%A4%A', headers: { ...headers, 'content-type': 'audio/wav' }, body: 'RIFF' });
        assert.equal(a.status, 400);
        assert.equal(JSON.parse(a.body.toString()).error.code, 'bad_request');
      }
      const health = await rawRequest(port, { method: 'GET', target: '/health' });
      assert.equal(health.body.toString(), 'ok');
    } finally {
      await stop(sidecar.child);
    }
  } finally {
    await fake.close();
  }
});
