import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { serverWithKey } from './helpers.js';

test('§3/§4.3 PUT on the head publishes a higher version; a stale base is 409 version_conflict naming the head', async () => {
  const s = await startTestServer();
  try {
    const { token, email } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const head = await s.call('GET', `/v1/servers/${serverId}/config`, { token });
    assert.equal(head.status, 200);
    assert.equal(head.body.version, 1);
    assert.equal(head.headers.get('etag'), '"v1"');
    const edited = { ...head.body, speech: { ...head.body.speech, limits: { ...head.body.speech.limits, per_hour: 5 } } };
    const put = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: edited, headers: { 'x-config-note': 'quieter' } });
    assert.equal(put.status, 200);
    assert.equal(put.body.version, 2);
    assert.equal(put.body.speech.limits.per_hour, 5);
    assert.equal(put.headers.get('etag'), '"v2"');
    const stale = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: edited });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, 'version_conflict');
    assert.match(stale.body.error.message, /version 2/);
    assert.equal((await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body.version, 2, 'a conflict leaves the head unchanged');
    const versions = await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token });
    assert.equal(versions.status, 200);
    assert.deepEqual(
      versions.body.map((v: { version: number }) => v.version),
      [2, 1],
    );
    assert.deepEqual(Object.keys(versions.body[0]).sort(), ['note', 'publishedAt', 'publishedBy', 'version']);
    assert.equal(versions.body[0].publishedBy, email);
    assert.equal(versions.body[0].note, 'quieter');
    assert.ok(!Number.isNaN(Date.parse(versions.body[0].publishedAt)));
    const old = await s.call('GET', `/v1/servers/${serverId}/config/versions/1`, { token });
    assert.equal(old.status, 200);
    assert.equal(old.body.bundle.speech.limits.per_hour, 20);
    assert.equal((await s.call('GET', `/v1/servers/${serverId}/config/versions/7`, { token })).status, 404);
  } finally {
    await s.stop();
  }
});

test('§7 422 validation_failed with details: themes_per_bot above the themes, negative limits, unknown fields', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const head = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const bad = {
      ...head,
      flavor: { ...head.flavor, themes_per_bot: 9 },
      speech: { ...head.speech, limits: { ...head.speech.limits, per_day: -1 } },
    };
    const r = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: bad });
    assert.equal(r.status, 422);
    assert.equal(r.body.error.code, 'validation_failed');
    const paths = r.body.error.details.map((d: { path: string }) => d.path).sort();
    assert.deepEqual(paths, ['flavor.themes_per_bot', 'speech.limits.per_day']);
    const typo = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: { ...head, polcy: {} } });
    assert.equal(typo.status, 422);
    assert.match(typo.body.error.details[0].message, /did you mean "policy"/);
    assert.equal((await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: '{"version":' })).status, 400);
    assert.equal((await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token })).body.length, 1, 'nothing was published');
  } finally {
    await s.stop();
  }
});

test('§3 rollback publishes the old content as a fresh, higher version; a missing version is 404; history is kept', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const v1 = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const v2 = (await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: { ...v1, game: { name: 'N', premise: 'P', goal: 'G' } } })).body;
    assert.equal(v2.version, 2);
    const back = await s.call('POST', `/v1/servers/${serverId}/config/rollback`, { token, body: { version: 1 } });
    assert.equal(back.status, 200);
    assert.equal(back.body.version, 3);
    assert.equal(back.body.game, null);
    assert.deepEqual({ ...back.body, version: 1 }, v1);
    assert.equal(back.headers.get('etag'), '"v3"');
    const missing = await s.call('POST', `/v1/servers/${serverId}/config/rollback`, { token, body: { version: 42 } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    const bad = await s.call('POST', `/v1/servers/${serverId}/config/rollback`, { token, body: { version: 'one' } });
    assert.equal(bad.status, 422);
    const versions = (await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token })).body;
    assert.deepEqual(
      versions.map((v: { version: number }) => v.version),
      [3, 2, 1],
    );
    assert.equal(versions[0].note, 'rollback to version 1');
    assert.equal((await s.call('GET', `/v1/servers/${serverId}/config/versions/2`, { token })).body.bundle.game.name, 'N');
    // The base of the next edit is the new head.
    assert.equal((await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: v2 })).status, 409);
    assert.equal((await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: back.body })).body.version, 4);
  } finally {
    await s.stop();
  }
});

test('concurrency: parallel publishes on the same base give exactly one 200, the rest 409', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const head = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: { ...head, flavor: { ...head.flavor, seed: i } } })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409]);
    const versions = (await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token })).body;
    assert.deepEqual(
      versions.map((v: { version: number }) => v.version),
      [2, 1],
    );
  } finally {
    await s.stop();
  }
});

test('a note longer than 500 characters is 422; other tenants see 404 on every config route', async () => {
  const s = await startTestServer();
  try {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    const { serverId } = await serverWithKey(s, a.token);
    const head = (await s.call('GET', `/v1/servers/${serverId}/config`, { token: a.token })).body;
    const long = await s.call('PUT', `/v1/servers/${serverId}/config`, { token: a.token, body: head, headers: { 'x-config-note': 'x'.repeat(501) } });
    assert.equal(long.status, 422);
    for (const [method, path, body] of [
      ['GET', `/v1/servers/${serverId}/config`, undefined],
      ['PUT', `/v1/servers/${serverId}/config`, head],
      ['GET', `/v1/servers/${serverId}/config/versions`, undefined],
      ['GET', `/v1/servers/${serverId}/config/versions/1`, undefined],
      ['POST', `/v1/servers/${serverId}/config/rollback`, { version: 1 }],
    ] as const) {
      const r = await s.call(method, path, { token: b.token, ...(body ? { body } : {}) });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(r.body.error.code, 'config_not_found');
    }
    assert.equal((await s.call('GET', `/v1/servers/${serverId}/config`)).status, 401);
  } finally {
    await s.stop();
  }
});

test('dashboard GET config honours its own ETag: If-None-Match of the head is 304 with an empty body, a stale one 200', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const same = await s.call('GET', `/v1/servers/${serverId}/config`, { token, headers: { 'if-none-match': '"v1"' } });
    assert.equal(same.status, 304);
    assert.equal(same.body, '');
    assert.equal(same.headers.get('etag'), '"v1"');
    const stale = await s.call('GET', `/v1/servers/${serverId}/config`, { token, headers: { 'if-none-match': '"v0"' } });
    assert.equal(stale.status, 200);
    assert.equal(stale.body.version, 1);
  } finally {
    await s.stop();
  }
});
