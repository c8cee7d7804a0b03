import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call, startReplica, tenantSession, type Replica } from '../helpers/replicas.js';
import { signRequest } from '../../src/signing/request.js';

/** Reads SSE blocks off a stream until one is a `version` event for `version`. */
async function untilVersion(reader: ReadableStreamDefaultReader<Uint8Array>, version: number, seen: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    assert.equal(done, false, `the stream ended before version ${version}; it brought: ${seen.join(' | ')}`);
    buf += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      seen.push(block);
      const m = /event: version\ndata: \{"version":(\d+)/.exec(block);
      if (m && Number(m[1]) === version) return;
    }
  }
}

test('two serve processes on one PostgreSQL: a publish and a rollback through one reach a config stream held on the other', async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  const replicas: Replica[] = [];
  const abort = new AbortController();
  try {
    // One after another: the first migrates.
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(url, dir.path, ['--data', `${dir.path}/data`]));
    const [a, b] = replicas.map((r) => r.url) as [string, string];
    const { token } = await tenantSession(a);
    const server = await call(a, 'POST', '/v1/servers', token, { name: 'fleet' });
    const { key } = await call(a, 'POST', `/v1/servers/${server.id}/keys`, token);

    const target = `/v1/config/stream?server=${server.id}&nonce=replica-stream`;
    const res = await fetch(a + target, { headers: signRequest(key, { method: 'GET', target }), signal: abort.signal });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body!.getReader();
    const seen: string[] = [];
    await untilVersion(reader, 1, seen);

    // The publish goes through the other process: only the database connects the two.
    const head = await call(b, 'GET', `/v1/servers/${server.id}/config`, token);
    const put = await call(b, 'PUT', `/v1/servers/${server.id}/config`, token, {
      ...head,
      speech: { ...head.speech, limits: { ...head.speech.limits, per_hour: 3 } },
    });
    assert.equal(put.version, 2);
    await untilVersion(reader, 2, seen);
    const rolled = await call(b, 'POST', `/v1/servers/${server.id}/config/rollback`, token, { version: 1 });
    assert.equal(rolled.version, 3);
    await untilVersion(reader, 3, seen);

    // What the stream announced is what a signed pull on its replica now answers.
    const pull = `/v1/config?server=${server.id}&nonce=replica-pull`;
    const got = await fetch(a + pull, { headers: { ...signRequest(key, { method: 'GET', target: pull }), 'if-none-match': '"v2"' } });
    assert.equal(got.status, 200);
    assert.equal(((await got.json()) as { version: number }).version, 3);
    await reader.cancel();
  } finally {
    abort.abort();
    for (const r of replicas) await r.kill();
    dir.dispose();
  }
});
