import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { USAGE_SHARDS } from '../../src/controlplane/postgres-store.js';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import { postgresTestDatabase } from '../helpers/databases.js';

test(`each store handle writes a server's usage and roster in a row of its own; the ${USAGE_SHARDS + 1}th handle shares the first's`, async () => {
  const t = await postgresTestDatabase();
  try {
    if (t.database.kind !== 'postgres') throw new Error('postgres expected');
    const pool = t.database.pool;
    const tenant = await (await openIdentityStore(t.database)).createTenant('t', 'pro');
    const first = await openControlPlaneStore(t.database);
    const server = await first.createServer(tenant.id, 's', DEFAULT_BUNDLE, 'system');
    // The sequence moved on as if many handles had opened since: the next takes the shard before
    // the first's, the one after wraps around to the first's.
    const firstShard = Number((await pool.query<{ v: string }>('SELECT last_value AS v FROM cp_usage_shard_seq')).rows[0]!.v) % USAGE_SHARDS;
    await pool.query('SELECT setval($1, $2)', ['cp_usage_shard_seq', USAGE_SHARDS * 3 + firstShard - 2]);
    const last = await openControlPlaneStore(t.second());
    const wrapped = await openControlPlaneStore(t.second());
    const at = Date.parse('2026-05-02T10:00:00Z');
    const report = (reportId: string, name: string) => ({
      serverId: String(server.id),
      ts: '2026-05-02T10:00:00Z',
      botCount: 1,
      playersOnline: 1,
      linesSpoken: 3,
      spendUsd: 0.25,
      events: [],
      reportId,
      roster: [{ agent: 1, name, alignment: 'a', goal: 'g', state: 's' }],
    });
    await first.ingest([{ serverId: server.id, receivedAt: at, report: report('a', 'first') }]);
    await last.ingest([{ serverId: server.id, receivedAt: at + 1, report: report('b', 'last') }]);
    await wrapped.ingest([{ serverId: server.id, receivedAt: at + 2, report: report('c', 'wrapped') }]);
    const shards = (await pool.query<{ shard: number; reports: number }>('SELECT shard, reports FROM cp_usage_daily')).rows;
    assert.deepEqual(
      new Map(shards.map((r) => [r.shard, Number(r.reports)])),
      new Map([
        [firstShard, 2],
        [(firstShard + USAGE_SHARDS - 1) % USAGE_SHARDS, 1],
      ]),
    );
    assert.equal((await pool.query('SELECT 1 FROM cp_roster')).rowCount, 2);
    const [day] = await wrapped.dailyUsage(server.id, '2026-05-02', '2026-05-02');
    assert.deepEqual([day!.reports, day!.linesSpoken, day!.spendUsd], [3, 9, 0.75]);
    assert.equal((await first.roster(server.id))[0]!.name, 'wrapped');
  } finally {
    await t.dispose();
  }
});
