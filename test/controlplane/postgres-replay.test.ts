import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { PgReplayLedger } from '../../src/controlplane/postgres-replay.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import { postgresTestDatabase } from '../helpers/databases.js';

test('a signature recorded through one replica is a replay through another; one burst, one winner each', async () => {
  const t = await postgresTestDatabase();
  try {
    if (t.database.kind !== 'postgres') throw new Error('postgres expected');
    await openIdentityStore(t.database);
    await openControlPlaneStore(t.database);
    const second = t.second();
    if (second.kind !== 'postgres') throw new Error('postgres expected');
    // Signatures inside the window (older ones are pruned: their timestamps refuse them).
    const now = Date.now();
    const s = Math.floor(now / 1000);
    const a = new PgReplayLedger(t.database.pool, 300, () => now);
    const b = new PgReplayLedger(second.pool, 300, () => now);
    assert.equal(await a.record(s, 42), true);
    assert.equal(await b.record(s, 42), false);
    assert.equal(await b.record(s + 1, 42), true, 'another second is another signature');
    // The same signature many times at once, through both: exactly one use.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).record(s + 2, 7)));
    assert.equal(burst.filter(Boolean).length, 1);
  } finally {
    await t.dispose();
  }
});
