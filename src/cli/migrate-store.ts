import { existsSync } from 'node:fs';
import type { Db } from '../store/sqlite.js';
import { openDatabaseAt, redact } from '../store/database.js';
import { transaction, type PoolClient } from '../store/postgres.js';
import { openStores } from '../embedded/backend.js';
import { ID_FLOOR_TABLE as VIDEO_ID_FLOOR_TABLE } from '../video/sqlite-store.js';
import { rowProblem } from './migrate-validate.js';

/** Rows copied per INSERT statement. */
export const COPY_BATCH_ROWS = 500;

/**
 * Tables that are not carried over: `brainstem up`'s local credentials (a development stack,
 * which makes its own on the new database when it first runs there). They are left behind, and named.
 */
export const NOT_CARRIED_TABLES: ReadonlySet<string> = new Set(['local_stack']);
/** SQLite's own bookkeeping of what PostgreSQL does by itself (ids never given twice): nothing to carry. */
const SQLITE_ONLY_TABLES: ReadonlySet<string> = new Set([VIDEO_ID_FLOOR_TABLE]);

export interface CopyReport {
  tables: { name: string; rows: number }[];
  /** Tables left behind (NOT_CARRIED_TABLES found in the source). */
  skipped: string[];
}

/** A problem with the source or the target that the user must fix; nothing was written. */
export class MigrateStoreError extends Error {}

/**
 * Copies every table of every store from a SQLite file to an empty PostgreSQL database, ids
 * kept and every identity sequence moved past the copied ids, in one transaction (all or
 * nothing). Both sides are first brought to the current schema, as `serve` would on start.
 * The target must hold no row in any of the stores' tables.
 */
export async function migrateStore(
  sqliteFile: string,
  postgresUrl: string,
  options: { onRows?: (copied: number, total: number) => void } = {},
): Promise<CopyReport> {
  if (!existsSync(sqliteFile)) throw new MigrateStoreError(`${sqliteFile} does not exist`);
  const source = openDatabaseAt({ kind: 'sqlite', file: sqliteFile });
  try {
    const target = openDatabaseAt({ kind: 'postgres', url: postgresUrl });
    try {
      await openStores(source, Date.now);
      await openStores(target, Date.now);
      if (source.kind !== 'sqlite' || target.kind !== 'postgres') throw new Error('unreachable');
      const db = source.db;
      return await transaction(target.pool, async (client) => {
        const targetTables = await tablesInOrder(client);
        const sourceTables = new Set(
          (
            db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'").all() as {
              name: string;
            }[]
          )
            .map((r) => r.name)
            .filter((name) => !SQLITE_ONLY_TABLES.has(name)),
        );
        const skipped = [...sourceTables].filter((t) => NOT_CARRIED_TABLES.has(t)).sort();
        const missing = [...sourceTables].filter((t) => !NOT_CARRIED_TABLES.has(t) && !targetTables.includes(t));
        if (missing.length > 0) throw new MigrateStoreError(`the target has no table for ${missing.join(', ')}: this build has no PostgreSQL store for them`);
        const copied = targetTables.filter((t) => sourceTables.has(t));
        await refuseNonEmpty(client, copied, postgresUrl);
        const tables: CopyReport['tables'] = [];
        const onRows = options.onRows;
        let done = 0;
        const total = onRows ? copied.reduce((n, t) => n + (db.prepare(`SELECT count(*) AS n FROM ${ident(t)}`).get() as { n: number }).n, 0) : 0;
        const counted = onRows ? (n: number) => onRows((done += n), total) : undefined;
        for (const table of copied) tables.push({ name: table, rows: await copyTable(db, client, table, counted) });
        await advanceSequences(client, copied, sourceFloors(db));
        return { tables, skipped };
      });
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** The target's tables (schema public), parents before the tables that refer to them. */
async function tablesInOrder(client: PoolClient): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename",
  );
  const { rows: refs } = await client.query<{ child: string; parent: string }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = 'public'`,
  );
  const parents = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set<string>()]));
  for (const r of refs) if (r.child !== r.parent) parents.get(r.child)?.add(r.parent);
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (t: string, path: Set<string>): void => {
    if (placed.has(t) || path.has(t)) return;
    path.add(t);
    for (const p of parents.get(t) ?? []) place(p, path);
    placed.add(t);
    order.push(t);
  };
  for (const t of tables) place(t.name, new Set());
  return order;
}

async function refuseNonEmpty(client: PoolClient, tables: readonly string[], url: string): Promise<void> {
  const full: string[] = [];
  for (const t of tables) {
    const { rows } = await client.query(`SELECT 1 FROM ${ident(t)} LIMIT 1`);
    if (rows.length > 0) full.push(t);
  }
  if (full.length > 0) throw new MigrateStoreError(`the target ${redact(url)} is not empty (rows in ${full.join(', ')}); migrate into a fresh database`);
}

interface TargetColumn {
  name: string;
  type: string;
}

async function copyTable(db: Db, client: PoolClient, table: string, counted?: (rows: number) => void): Promise<number> {
  const { rows: targetColumns } = await client.query<TargetColumn>(
    "SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
    [table],
  );
  const types = new Map(targetColumns.map((c) => [c.name, c.type]));
  const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name);
  const unknown = columns.filter((c) => !types.has(c));
  if (unknown.length > 0) throw new MigrateStoreError(`the target's ${table} has no column ${unknown.join(', ')}`);
  const convert = columns.map((c) => converter(types.get(c)!));
  const select = db.prepare(`SELECT ${columns.map(ident).join(', ')} FROM ${ident(table)}`).raw(true);
  const insertInto = `INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')}) OVERRIDING SYSTEM VALUE VALUES `;
  let copied = 0;
  let batch: unknown[][] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const params: unknown[] = [];
    const tuples = batch.map((row) => `(${row.map((v) => `$${params.push(v)}`).join(', ')})`);
    await client.query(insertInto + tuples.join(', '), params);
    copied += batch.length;
    counted?.(batch.length);
    batch = [];
  };
  for (const row of select.iterate() as IterableIterator<unknown[]>) {
    const named: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) named[columns[i]!] = row[i];
    const problem = rowProblem(table, named);
    if (problem !== null)
      throw new MigrateStoreError(`a row no API request could have written: ${problem}; fix it in the SQLite file (nothing was copied) and run again`);
    batch.push(row.map((v, i) => convert[i]!(v)));
    if (batch.length >= COPY_BATCH_ROWS) await flush();
  }
  await flush();
  return copied;
}

const asIs = (v: unknown): unknown => v;

/** SQLite keeps booleans as 0/1; every other value (integer, real, text, bytes) goes as it is. */
function converter(type: string): (v: unknown) => unknown {
  return type === 'boolean' ? (v) => (v === null ? null : Boolean(v)) : asIs;
}

/** Moves every identity sequence of the copied tables past the largest id copied, so new rows never collide. */
async function advanceSequences(client: PoolClient, tables: readonly string[], floors: ReadonlyMap<string, number>): Promise<void> {
  const { rows } = await client.query<{ table: string; column: string }>(
    "SELECT table_name AS table, column_name AS column FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES' AND table_name = ANY($1)",
    [tables],
  );
  for (const { table, column } of rows) {
    // Past the highest id SQLite ever gave too, not only the highest still there: ids of deleted rows are not given again.
    const floor = floors.get(table) ?? 0;
    await client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(COALESCE((SELECT MAX(${ident(column)}) FROM ${ident(table)}), 0), $3::bigint, 1), (SELECT COUNT(*) > 0 FROM ${ident(table)}) OR $3::bigint > 0)`,
      [table, column, floor],
    );
  }
}

/** The highest id SQLite ever gave in each table that keeps one (deleted rows included). */
function sourceFloors(db: Db): Map<string, number> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(VIDEO_ID_FLOOR_TABLE);
  if (!exists) return new Map();
  const rows = db.prepare(`SELECT tbl, last_id FROM ${VIDEO_ID_FLOOR_TABLE}`).all() as { tbl: string; last_id: number }[];
  return new Map(rows.map((r) => [r.tbl, r.last_id]));
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
