import type { Command } from 'commander';
import { addNextBundleKey } from '../../controlplane/bundle-signer.js';
import { CONTROLPLANE_CHANNEL, type ControlPlaneEvent } from '../../controlplane/cluster.js';
import type { ControlPlaneStore } from '../../controlplane/store.js';
import { CliError, withDatabaseOptions } from '../util.js';
import { withDataDirOption } from '../data-dir.js';
import { withStackDatabase } from './stack-database.js';

/**
 * The installation's bundle-signing keys, on the services' database. A rotation adds a key
 * endorsed by the one before it (a sidecar that pinned the old key follows the endorsement),
 * and tells running replicas on PostgreSQL at once; a server on SQLite picks it up within a
 * minute (it reads its keys again every BUNDLE_KEY_REFRESH_MS).
 */
export function registerKeys(program: Command): void {
  const keys = withDataDirOption(
    withDatabaseOptions(program.command('keys').description("the installation's bundle-signing keys (ed25519; public keys at GET /v1/config/keys)")),
    'the data directory whose brainstem.db to use, as serve and up find it',
  );

  const withStore = (cmd: Command, fn: (store: ControlPlaneStore, notify: () => Promise<void>) => Promise<unknown>): Promise<void> =>
    withStackDatabase(cmd, async (database) => {
      const { openControlPlaneStore } = await import('../../controlplane/open-store.js');
      const store = await openControlPlaneStore(database);
      const notify = async (): Promise<void> => {
        if (database.kind !== 'postgres') return;
        const event: ControlPlaneEvent = { kind: 'keys' };
        await database.pool.query('SELECT pg_notify($1, $2)', [CONTROLPLANE_CHANNEL, JSON.stringify(event)]);
      };
      return fn(store, notify);
    });

  keys
    .command('rotate')
    .description('make a new bundle-signing key, endorsed by the current one; sidecars that pinned the old key follow it')
    .action(async (_opts: unknown, cmd: Command) => {
      await withStore(cmd, async (store, notify) => {
        const key = await addNextBundleKey(store).catch((err: unknown) => {
          throw new CliError(err instanceof Error ? err.message : String(err));
        });
        await notify();
        return key;
      });
    });

  keys
    .command('list')
    .description('the bundle-signing public keys, oldest first (the last is active)')
    .action(async (_opts: unknown, cmd: Command) => {
      await withStore(cmd, async (store) => {
        const all = await store.bundleKeys();
        return all.map((k, i) => ({ id: k.id, publicKey: k.publicKey, createdAt: k.createdAt, active: i === all.length - 1, previous: k.previous }));
      });
    });
}
