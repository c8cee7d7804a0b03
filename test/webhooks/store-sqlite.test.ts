import { join } from 'node:path';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import { tempDir } from '../helpers/paths.js';
import { webhookStoreContract } from './store-contract.js';

webhookStoreContract('SQLite', async (now) => {
  const dir = tempDir();
  const db = openDatabase(join(dir.path, 'webhooks.db'));
  return {
    store: new SqliteWebhookStore(db, now),
    close: async () => {
      db.close();
      dir.dispose();
    },
  };
});
