import { join } from 'node:path';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteIdentityStore } from '../../src/identity/store.js';
import { SqliteVideoStore } from '../../src/video/sqlite-store.js';
import type { TenantId } from '../../src/identity/types.js';
import { tempDir } from '../helpers/paths.js';
import { videoStoreContract } from './store-contract.js';

videoStoreContract('SQLite', async (now) => {
  const dir = tempDir();
  const db = openDatabase(join(dir.path, 'video.db'));
  const identity = new SqliteIdentityStore(db);
  let n = 0;
  return {
    store: new SqliteVideoStore(db, now),
    newTenant: async () => (await identity.createTenant(`Tenant ${++n}`, 'agency')).id as TenantId,
    async close() {
      db.close();
      dir.dispose();
    },
  };
});
