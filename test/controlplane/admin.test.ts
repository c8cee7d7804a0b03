import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { cli, tempDir } from '../helpers/paths.js';
import { BURST_LIMITS, report, serverWithKey, signed } from './helpers.js';

const run = promisify(execFile);

test("admin tenants show serverCount and monthlySpendUsd; the drill-down lists the tenant's servers", async () => {
  const s = await startTestServer();
  try {
    const { token, tenantId } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    await serverWithKey(s, token, 'b');
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { spendUsd: 1.25 }) })).status, 202);
    const list = await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN });
    const t = list.body.find((x: { id: number }) => x.id === tenantId);
    assert.equal(t.serverCount, 2);
    assert.equal(t.monthlySpendUsd, 1.25);
    const one = await s.call('GET', `/v1/admin/tenants/${tenantId}`, { token: ADMIN_TOKEN });
    assert.equal(one.status, 200);
    assert.deepEqual(
      one.body.servers.map((x: { name: string }) => x.name),
      ['a', 'b'],
    );
    assert.equal(one.body.servers[0].botCount, 12);
  } finally {
    await s.stop();
  }
});

test('brainstem admin create-server and create-server-key (JSON) make a key the running server accepts', async () => {
  const dir = tempDir();
  const db = join(dir.path, 'cli.db');
  const s = await startTestServer({ db });
  try {
    const { tenantId } = await tenantSession(s);
    const server = JSON.parse(
      (await run(process.execPath, [cli, 'admin', '--db', db, 'create-server', '--tenant', String(tenantId), '--name', 'from-cli'])).stdout,
    );
    assert.equal(server.name, 'from-cli');
    assert.equal(server.configVersion, 1);
    const key = JSON.parse((await run(process.execPath, [cli, 'admin', '--db', db, 'create-server-key', '--server', String(server.id)])).stdout);
    assert.match(key.key, /^bsk_/);
    const pull = await signed(s, key.key, 'GET', `/v1/config?server=${server.id}`);
    assert.equal(pull.status, 200);
    assert.equal(pull.headers.get('etag'), '"v1"');
    const bad = await run(process.execPath, [cli, 'admin', '--db', db, 'create-server-key', '--server', '999']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal((bad as { code: number }).code, 1);
    assert.match((bad as { stderr: string }).stderr, /no server with id 999/);
  } finally {
    await s.stop();
    dir.dispose();
  }
});

test('durability: after close and reopen on the same file, history, keys, telemetry and read models are intact', async () => {
  const dir = tempDir();
  const db = join(dir.path, 'durable.db');
  try {
    const s1 = await startTestServer({ db, limits: BURST_LIMITS });
    const { token, email } = await tenantSession(s1, 'pro', `durable-${Date.now()}@example.com`);
    const a = await serverWithKey(s1, token);
    const head = (await s1.call('GET', `/v1/servers/${a.serverId}/config`, { token })).body;
    await s1.call('PUT', `/v1/servers/${a.serverId}/config`, {
      token,
      body: { ...head, flavor: { ...head.flavor, seed: 7 } },
      headers: { 'x-config-note': 'seed 7' },
    });
    for (let i = 0; i < 5; i++) {
      const r = await signed(s1, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: `d-${i}`, linesSpoken: 3 }) });
      assert.equal(r.status, 202);
    }
    const before = {
      versions: (await s1.call('GET', `/v1/servers/${a.serverId}/config/versions`, { token })).body,
      usage: (await s1.call('GET', `/v1/servers/${a.serverId}/usage`, { token })).body,
      activity: (await s1.call('GET', `/v1/servers/${a.serverId}/activity?limit=100`, { token })).body,
    };
    await s1.stop();

    const s2 = await startTestServer({ db });
    try {
      const login = await s2.call('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } });
      const t2 = login.body.token;
      assert.deepEqual((await s2.call('GET', `/v1/servers/${a.serverId}/config/versions`, { token: t2 })).body, before.versions);
      assert.deepEqual((await s2.call('GET', `/v1/servers/${a.serverId}/usage`, { token: t2 })).body, before.usage);
      assert.deepEqual((await s2.call('GET', `/v1/servers/${a.serverId}/activity?limit=100`, { token: t2 })).body, before.activity);
      assert.equal(before.usage.linesSpoken, 15);
      const pull = await signed(s2, a.key, 'GET', `/v1/config?server=${a.serverId}&n=after`);
      assert.equal(pull.headers.get('etag'), '"v2"');
      assert.equal(pull.body.flavor.seed, 7);
      const dup = await signed(s2, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: 'd-0', botCount: 1 }) });
      assert.deepEqual(dup.body, { accepted: false, received: 0 }, 'dedupe survives a restart');
    } finally {
      await s2.stop();
    }
  } finally {
    dir.dispose();
  }
});
