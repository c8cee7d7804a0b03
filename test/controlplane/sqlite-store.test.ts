import { join } from 'node:path';
import { SqliteControlPlaneStore } from '../../src/controlplane/sqlite-store.js';
import { SqliteIdentityStore } from '../../src/identity/store.js';
import { openDatabase, type Db } from '../../src/store/sqlite.js';
import { tempDir } from '../helpers/paths.js';
import { runControlPlaneStoreSuite } from './store-suite.js';

runControlPlaneStoreSuite('sqlite', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'cp.db');
  const handles: Db[] = [openDatabase(file)];
  const tenant = await new SqliteIdentityStore(handles[0]!).createTenant('t', 'pro');
  return {
    store: new SqliteControlPlaneStore(handles[0]!),
    tenantId: tenant.id,
    second: () => {
      const db = openDatabase(file);
      handles.push(db);
      return new SqliteControlPlaneStore(db);
    },
    close: () => {
      for (const db of handles) db.close();
      dir.dispose();
    },
  };
});
