import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import { postgresTestDatabase } from '../helpers/databases.js';

test('PostgreSQL stores reports without a per-report foreign-key trigger; the tables that name a server once a batch keep theirs', async () => {
  const t = await postgresTestDatabase();
  try {
    if (t.database.kind !== 'postgres') throw new Error('postgres expected');
    const pool = t.database.pool;
    const tenant = await (await openIdentityStore(t.database)).createTenant('t', 'pro');
    const store = await openControlPlaneStore(t.database);
    const server = await store.createServer(tenant.id, 's', DEFAULT_BUNDLE, 'system');
    const keys = async (table: string) =>
      (await pool.query<{ n: string }>("SELECT COUNT(*) AS n FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f'", [table])).rows[0]!.n;
    assert.equal(Number(await keys('cp_reports')), 0);
    assert.equal(Number(await keys('cp_usage_daily')), 1);
    assert.equal(Number(await keys('cp_roster')), 1);
    const at = Date.parse('2026-05-02T10:00:00Z');
    const report = {
      serverId: String(server.id),
      ts: '2026-05-02T10:00:00Z',
      botCount: 1,
      playersOnline: 1,
      linesSpoken: 2,
      spendUsd: 0,
      events: [],
      reportId: 'a',
    };
    const [first] = await store.ingest([{ serverId: server.id, receivedAt: at, report }]);
    const [again] = await store.ingest([{ serverId: server.id, receivedAt: at, report }]);
    assert.deepEqual([first!.accepted, again!.accepted], [true, false]);
    assert.equal(await store.countReports(server.id), 1);
  } finally {
    await t.dispose();
  }
});
