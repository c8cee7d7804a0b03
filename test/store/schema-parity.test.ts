import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbedded } from '../../src/embedded/start.js';
import { ensureLocalStack } from '../../src/cli/local-stack.js';
import { openDatabase } from '../../src/store/sqlite.js';
import type { DatabaseLocation } from '../../src/store/database.js';
import { tempDir } from '../helpers/paths.js';
import { freshDatabase } from '../helpers/postgres.js';

// Every table is written twice, once in SQLite's DDL and once in PostgreSQL's. This holds the
// two to one shape: after every component has migrated, both catalogues list the same tables
// with the same columns, each of the same kind and nullability. A column added to one dialect
// and forgotten in the other fails here, not in a replica's first query.

/** The kind of value a column holds, as both dialects can say it. */
type Kind = 'integer' | 'real' | 'text' | 'blob';
interface Column {
  kind: Kind;
  nullable: boolean;
}
type Catalogue = Map<string, Map<string, Column>>;

/**
 * Tables that exist in one dialect only, on purpose. Each names why.
 */
const ONE_DIALECT: Record<string, string> = {
  // SQLite would give a deleted row's id again; PostgreSQL identity columns never do.
  video_id_floor: 'sqlite',
  // Shared between replicas on PostgreSQL; on SQLite the one process keeps both in memory
  // (the signed-request replay record and the rate limiter's counts).
  cp_replay: 'postgres',
  rate_hits: 'postgres',
};

/**
 * Columns that exist in one dialect only, on purpose, as `table.column`. Each names why.
 */
const ONE_DIALECT_COLUMNS: Record<string, string> = {
  // Replicas add a server's daily usage and roster to rows of their own (USAGE_SHARDS); the one
  // SQLite process keeps one row of each. A row copied from SQLite by migrate-store is shard 0.
  'cp_usage_daily.shard': 'postgres',
  'cp_roster.shard': 'postgres',
};

function sqliteKind(declared: string): Kind {
  const t = declared.toUpperCase();
  // SQLite's own affinity rules (https://www.sqlite.org/datatype3.html §3.1), in their order.
  if (t.includes('INT')) return 'integer';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'text';
  if (t === '' || t.includes('BLOB')) return 'blob';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'real';
  return 'integer';
}

function pgKind(dataType: string): Kind {
  switch (dataType) {
    case 'smallint':
    case 'integer':
    case 'bigint':
    case 'boolean':
      return 'integer';
    case 'real':
    case 'double precision':
    case 'numeric':
      return 'real';
    case 'bytea':
      return 'blob';
    default:
      return 'text';
  }
}

function sqliteCatalogue(file: string): Catalogue {
  const db = openDatabase(file);
  try {
    const out: Catalogue = new Map();
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
    for (const { name } of tables) {
      const columns = new Map<string, Column>();
      for (const c of db.prepare(`PRAGMA table_info(${JSON.stringify(name)})`).all() as { name: string; type: string; notnull: number; pk: number }[]) {
        // A primary key column is never null in either dialect, whether or not SQLite's DDL says NOT NULL.
        columns.set(c.name, { kind: sqliteKind(c.type), nullable: c.notnull === 0 && c.pk === 0 });
      }
      out.set(name, columns);
    }
    return out;
  } finally {
    db.close();
  }
}

async function pgCatalogue(url: string): Promise<Catalogue> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
      `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'`,
    );
    const out: Catalogue = new Map();
    for (const r of rows) {
      let table = out.get(r.table_name);
      if (!table) out.set(r.table_name, (table = new Map()));
      table.set(r.column_name, { kind: pgKind(r.data_type), nullable: r.is_nullable === 'YES' });
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Runs every component's migrations on the location: every service of `serve`, and `up`'s own record. */
async function migrateAll(location: DatabaseLocation, dir: string): Promise<void> {
  const server = await startEmbedded({ port: 0, database: location, dataDir: join(dir, 'data'), adminToken: 'bsa_parity' });
  await server.close();
  await ensureLocalStack(location);
}

function describe(c: Column): string {
  return `${c.kind}${c.nullable ? ' null' : ' not null'}`;
}

test('the SQLite and PostgreSQL schemas have the same tables and columns, of the same kinds', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'parity.db');
    await migrateAll({ kind: 'sqlite', file }, dir.path);
    const url = await freshDatabase();
    await migrateAll({ kind: 'postgres', url }, join(dir.path, 'pg'));
    const lite = sqliteCatalogue(file);
    const post = await pgCatalogue(url);

    const problems: string[] = [];
    for (const name of new Set([...lite.keys(), ...post.keys()])) {
      const a = lite.get(name);
      const b = post.get(name);
      if (!a || !b) {
        const only = a ? 'sqlite' : 'postgres';
        if (ONE_DIALECT[name] !== only) problems.push(`${name}: only on ${only}`);
        continue;
      }
      for (const column of new Set([...a.keys(), ...b.keys()])) {
        const x = a.get(column);
        const y = b.get(column);
        if (!x || !y) {
          const only = x ? 'sqlite' : 'postgres';
          if (ONE_DIALECT_COLUMNS[`${name}.${column}`] !== only) problems.push(`${name}.${column}: only on ${only}`);
        } else if (x.kind !== y.kind || x.nullable !== y.nullable) problems.push(`${name}.${column}: sqlite ${describe(x)}, postgres ${describe(y)}`);
      }
    }
    for (const [column, only] of Object.entries(ONE_DIALECT_COLUMNS)) {
      const [table, name] = column.split('.') as [string, string];
      if (!(only === 'sqlite' ? lite : post).get(table)?.has(name))
        problems.push(`${column}: listed as ${only}-only but missing there; drop it from ONE_DIALECT_COLUMNS`);
    }
    for (const [name, only] of Object.entries(ONE_DIALECT)) {
      if (!(only === 'sqlite' ? lite : post).has(name)) problems.push(`${name}: listed as ${only}-only but missing there; drop it from ONE_DIALECT`);
    }
    assert.deepEqual(problems, []);
    assert.ok(lite.size > 20, `saw only ${lite.size} SQLite tables: the migrations did not run`);
  } finally {
    dir.dispose();
  }
});
