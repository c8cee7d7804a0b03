import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { startEmbedded } from '../../../src/embedded/start.js';
import { startTestServer, tenantSession, ADMIN_TOKEN, type TestServer } from '../../helpers/embedded.js';
import { runCli, tempDir } from '../../helpers/paths.js';
import { freshDatabase } from '../../helpers/postgres.js';
import { report, serverWithKey, signed } from '../../controlplane/helpers.js';
import { createProperty } from '../../video/helpers.js';

/** The reads a user of the data makes, from whichever server holds it. */
async function reads(s: Pick<TestServer, 'call'>, token: string, apiKey: string, ids: { server: number; widget: string; property: number }) {
  const get = async (path: string, t = token) => {
    const r = await s.call('GET', path, { token: t });
    assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    me: await get('/v1/auth/me'),
    servers: await get('/v1/servers'),
    versions: await get(`/v1/servers/${ids.server}/config/versions`),
    config: await get(`/v1/servers/${ids.server}/config`),
    keys: await get(`/v1/servers/${ids.server}/keys`),
    usage: await get(`/v1/servers/${ids.server}/usage`),
    endpoints: await get(`/v1/widgets/${ids.widget}/webhooks`),
    property: await get(`/v1/properties/${ids.property}`, apiKey),
    apiKeys: await get('/v1/api-keys'),
    tenants: await get('/v1/admin/tenants', ADMIN_TOKEN),
  };
}

test('migrate-store: a SQLite database with data moves to PostgreSQL; serve on PostgreSQL answers the same reads, keys and sessions still work, new ids follow the copied ones; a second run is refused', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'source.db');
  const url = await freshDatabase();
  try {
    const source = await startTestServer({ db: file, allowPrivateWebhooks: true });
    const { token } = await tenantSession(source, 'agency');
    await tenantSession(source, 'trial');
    const sidecar = await serverWithKey(source, token);
    await serverWithKey(source, token, 'second');
    const v1 = (await source.call('GET', `/v1/servers/${sidecar.serverId}/config`, { token })).body;
    assert.equal(
      (await source.call('PUT', `/v1/servers/${sidecar.serverId}/config`, { token, body: { ...v1, game: { name: 'Moved', premise: 'p', goal: 'g' } } })).status,
      200,
    );
    assert.equal((await signed(source, sidecar.key, 'POST', '/v1/telemetry', { body: report(sidecar.serverId, { reportId: 'r1' }) })).status, 202);
    const widget = (await source.call('POST', '/v1/widgets', { token, body: { name: 'site' } })).body.id as string;
    assert.equal(
      (await source.call('POST', `/v1/widgets/${widget}/webhooks`, { token, body: { url: 'http://127.0.0.1:9/hook', events: ['lead.captured'] } })).status,
      201,
    );
    const apiKey = (await source.call('POST', '/v1/api-keys', { token, body: { name: 'k' } })).body.key as string;
    const property = await createProperty(source, apiKey);
    const deleted = await createProperty(source, apiKey);
    assert.equal((await source.call('DELETE', `/v1/properties/${deleted}`, { token: apiKey })).status, 204);
    const ids = { server: sidecar.serverId, widget, property };
    const before = await reads(source, token, apiKey, ids);
    await source.close();

    const moved = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url, '--json']);
    assert.equal(moved.code, 0, moved.stderr);
    const copied = JSON.parse(moved.stdout) as { tables: { name: string; rows: number }[] };
    const rows = new Map(copied.tables.map((t) => [t.name, t.rows]));
    assert.equal(rows.get('tenants'), 2);
    assert.equal(rows.get('cp_config_versions'), 3);
    assert.equal(rows.get('cp_reports'), 1);
    assert.ok((rows.get('webhook_endpoints') ?? 0) >= 1 && (rows.get('video_properties') ?? rows.get('properties') ?? 0) >= 1, moved.stdout);

    const target = await startEmbedded({
      port: 0,
      database: { kind: 'postgres', url },
      adminToken: ADMIN_TOKEN,
      dataDir: join(dir.path, 'data'),
      allowPrivateWebhooks: true,
    });
    try {
      const t = { call: (method: string, path: string, o: { token?: string; body?: unknown } = {}) => callAt(target.url, method, path, o) };
      assert.deepEqual(await reads(t, token, apiKey, ids), before);
      // The server key signs as before; new rows get ids after the copied ones.
      assert.equal(
        (
          await signed({ url: target.url } as TestServer, sidecar.key, 'GET', `/v1/config?server=${sidecar.serverId}&n=2`, {
            headers: { 'if-none-match': '"v2"' },
          })
        ).status,
        304,
      );
      const third = await t.call('POST', '/v1/servers', { token, body: { name: 'third' } });
      assert.equal(third.status, 201);
      assert.ok(third.body.id > sidecar.serverId + 1, `new server id ${third.body.id}`);
      // Nor is the id of a row deleted before the move given again.
      const next = await t.call('POST', '/v1/properties', { token: apiKey, body: { address: '9 New St' } });
      assert.equal(next.status, 201);
      assert.ok(next.body.id > deleted, `new property id ${next.body.id} after the deleted ${deleted}`);
    } finally {
      await target.close();
    }

    const again = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not empty/);
    assert.doesNotMatch(again.stderr, /brainstem-test/, 'the password is not shown');
  } finally {
    dir.dispose();
  }
});

test('migrate-store: bad arguments exit 1 with one line and write nothing', async () => {
  const dir = tempDir();
  try {
    for (const args of [
      ['migrate-store', '--from', 'postgres://h/db', '--to', 'postgres://h/db2'],
      ['migrate-store', '--from', 'sqlite:x.db', '--to', 'sqlite:y.db'],
      ['migrate-store', '--from', `sqlite:${join(dir.path, 'missing.db')}`, '--to', 'postgres://127.0.0.1:1/none'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  } finally {
    dir.dispose();
  }
});

async function callAt(base: string, method: string, path: string, o: { token?: string; body?: unknown }) {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

// Issue 29: migrate-store copied values no API would accept (`plan = 'god-mode'`). Every row now
// goes through the API's own rules, and the first bad one is named (table, row, column) with
// nothing copied.
test('issue 29: migrate-store refuses a row no API could have written, naming its table, row and column, and copies nothing', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'edited.db');
  const url = await freshDatabase();
  try {
    const source = await startTestServer({ db: file });
    const { tenantId, token } = await tenantSession(source, 'pro');
    const server = (await source.call('POST', '/v1/servers', { token, body: { name: 'ok' } })).body.id as number;
    await source.close();
    const Database = (await import('better-sqlite3')).default;
    const cases: [string, RegExp][] = [
      [
        `UPDATE tenants SET plan = 'god-mode' WHERE id = ${tenantId}`,
        new RegExp(`table tenants, row id ${tenantId}, column plan: must be one of trial, starter, pro, agency, enterprise, got "god-mode"`),
      ],
      [`UPDATE cp_servers SET name = 'a' || char(0) || 'b' WHERE id = ${server}`, new RegExp(`table cp_servers, row id ${server}, column name: .*NUL`)],
      [
        `UPDATE cp_config_versions SET bundle = '{"version": 1}' WHERE server_id = ${server}`,
        /table cp_config_versions, row server_id \d+, version 1, column bundle: fails validation/,
      ],
    ];
    for (const [edit, expected] of cases) {
      const db = new Database(file);
      db.exec('BEGIN');
      db.exec(edit);
      db.exec('COMMIT');
      db.close();
      const r = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, expected);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      // Nothing was copied: the target is still empty, so the run after the fix is not refused for it.
      const undo = new Database(file);
      undo.exec(`UPDATE tenants SET plan = 'pro' WHERE id = ${tenantId}`);
      undo.exec(`UPDATE cp_servers SET name = 'ok' WHERE id = ${server}`);
      undo.close();
    }
  } finally {
    dir.dispose();
  }
});
