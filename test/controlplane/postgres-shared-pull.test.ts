import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SIGNATURE_HEADER, signRequest } from '../../src/signing/request.js';
import { openPool } from '../../src/store/postgres.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';
import { BURST_LIMITS, serverWithKey, signed } from './helpers.js';

/**
 * With a shared replay record, the cached signed pull is counted against its key's rate before
 * its record is written (one limiter call): a pull that turns out a replay gives its count
 * back, and every answer is still the one the record-first order gives.
 */

test("a pull found a replay by the shared record is 401 and uses none of its key's rate; a key at its rate still answers a replay 401", async () => {
  const url = await freshDatabase();
  const s = await startTestServer({ database: { kind: 'postgres', url }, limits: { ...BURST_LIMITS, serverKey: { limit: 3, windowMs: 3_600_000 } } });
  const pool = openPool(url);
  try {
    const { token } = await tenantSession(s, 'pro');
    const { serverId, key } = await serverWithKey(s, token);
    // The first pull caches the key, its tenant and the head: the pulls after it take the shortcut. One of three used.
    assert.equal((await signed(s, key, 'GET', `/v1/config?server=${serverId}&n=warm`)).status, 200);
    // A signature another replica already used: written to the shared record as that replica's flush would.
    const usedElsewhere = async (n: string): Promise<number> => {
      const at = Date.now();
      const target = `/v1/config?server=${serverId}&n=${n}`;
      const sig = signRequest(key, { method: 'GET', target }, at)[SIGNATURE_HEADER]!;
      await pool.query('INSERT INTO cp_replay (ts, slot) VALUES ($1, $2)', [Math.floor(at / 1000), Number.parseInt(sig.slice(0, 13), 16)]);
      return at;
    };
    for (const n of ['r1', 'r2', 'r3']) {
      const replay = await signed(s, key, 'GET', `/v1/config?server=${serverId}&n=${n}`, { at: await usedElsewhere(n) });
      assert.equal(replay.status, 401, JSON.stringify(replay.body));
      assert.match(replay.body.error.message, /replay/);
    }
    // Three replays counted nothing: two of three are left.
    for (const n of ['ok1', 'ok2']) assert.equal((await signed(s, key, 'GET', `/v1/config?server=${serverId}&n=${n}`)).status, 200);
    const over = await signed(s, key, 'GET', `/v1/config?server=${serverId}&n=over`);
    assert.equal(over.status, 429);
    // At its rate, the key's replay is still a replay.
    const late = await signed(s, key, 'GET', `/v1/config?server=${serverId}&n=late`, { at: await usedElsewhere('late') });
    assert.equal(late.status, 401);
    assert.match(late.body.error.message, /replay/);
  } finally {
    await pool.end();
    await s.stop();
  }
});
