/**
 * The manual's examples, run as a reader runs them: each request a page shows is sent to a real
 * server and its answer compared with what the page prints. (test/docs.test.ts checks the
 * pages' text alone and stays in the unit tier.)
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serverWithKey } from './controlplane/helpers.js';
import { startTestServer, tenantSession } from './helpers/embedded.js';
import { repoRoot, tempDir } from './helpers/paths.js';
import { post, startTest } from './sidecar/helpers.js';
import { apiKey, ffprobe, POLLING_LIMITS, startVideoServer, testImage, waitForVideo } from './video/helpers.js';

const read = (page: string) => readFileSync(join(repoRoot, page), 'utf8');

test("the README's tick answers as the README shows, byte for byte; with no ammunition she flees", async () => {
  const readme = read('README.md');
  const tick = /-d '(\{\n  "snapshot"[\s\S]*?\}\})'\n```/.exec(readme)?.[1];
  const reply = /```json\n(\{"agent":17.*\})\n```/.exec(readme)?.[1];
  assert.ok(tick && reply, 'the tick example or its reply is no longer in the README');
  const sidecar = await startTest({ token: 'bst_readme' });
  try {
    const r = await post(sidecar.url, tick, 'json', { authorization: 'Bearer bst_readme' });
    assert.equal(r.status, 200);
    assert.equal(r.bytes.toString('utf8'), reply);
    const unarmed = await post(sidecar.url, tick.replace('"ammo": 30', '"ammo": 0').replace('"agent": 17', '"agent": 18'), 'json', {
      authorization: 'Bearer bst_readme',
    });
    assert.equal((unarmed.json() as { intents: { kind: string }[] }).intents[0]!.kind, 'Flee');
  } finally {
    await sidecar.close();
  }
});

test("video.md's first tour runs as the page shows it, curl for curl, against a fresh server", async () => {
  const s = await startVideoServer({ limits: POLLING_LIMITS });
  const dir = tempDir();
  try {
    const { key } = await apiKey(s);
    writeFileSync(join(dir.path, 'front.jpg'), testImage('jpg', '640x360'));
    writeFileSync(join(dir.path, 'kitchen.jpg'), testImage('jpg', '320x240'));
    const block = /## A first tour, with curl[\s\S]*?```sh\n([\s\S]*?)```/.exec(read('docs/video.md'))?.[1];
    assert.ok(block, 'the walk is no longer in docs/video.md');
    const steps = block
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((line) => line.startsWith('curl ') || line.startsWith('# '));
    assert.ok(steps.filter((l) => l.startsWith('curl ')).length >= 4);
    let last = '';
    for (const step of steps) {
      if (step.startsWith('# ')) {
        const shown = /^# \d{3} (.*?)…/.exec(step)?.[1];
        if (shown) assert.ok(last.startsWith(shown), `${step}\ngot ${last}`);
        continue;
      }
      if (step.includes('-o tour.mp4')) await waitForVideo(s, key, 1);
      // Asynchronously: the server answers from this very process.
      const run = await promisify(execFile)('bash', ['-c', step.replaceAll('http://127.0.0.1:8080', s.url)], {
        cwd: dir.path,
        env: { ...process.env, KEY: key },
      });
      last = run.stdout;
    }
    assert.equal(ffprobe(join(dir.path, 'tour.mp4')).codec, 'h264');
  } finally {
    await s.stop();
    dir.dispose();
  }
});

test("controlplane.md's signed pull with a shell and curl is answered 200 with the bundle", async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId, key } = await serverWithKey(s, token);
    const block = /With a shell and curl[\s\S]*?```sh\n([\s\S]*?)```/.exec(read('docs/controlplane.md'))?.[1];
    assert.ok(block, 'the signed curl is no longer in docs/controlplane.md');
    const script = block.replaceAll('http://127.0.0.1:8080', s.url).replaceAll('server=7', `server=${serverId}`);
    const { stdout } = await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, KEY: key } });
    assert.match(stdout, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(stdout, /\r\netag: "v1"\r\n/i);
  } finally {
    await s.stop();
  }
});
