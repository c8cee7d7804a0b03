import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import { sqliteTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, webhookStoreContract } from './store-contract.js';

webhookStoreContract('SQLite', onTestDatabase(sqliteTestDatabase, true));

test("the claim's due query reads the index in claim order: no sort of every delivery due in the same millisecond", () => {
  const db = openDatabase(':memory:');
  try {
    // The statement itself, not a copy of its text that could drift from it.
    const due = (new SqliteWebhookStore(db) as unknown as { q: { due: { source: string } } }).q.due.source;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${due}`).all(0, '[]', 0, 1) as { detail: string }[]).map((r) => r.detail);
    assert.ok(
      plan.some((d) => d.includes('USING INDEX webhook_deliveries_due')),
      plan.join('\n'),
    );
    assert.ok(!plan.some((d) => d.includes('TEMP B-TREE')), plan.join('\n'));
  } finally {
    db.close();
  }
});
