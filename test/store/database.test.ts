import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { chooseDatabase, DEFAULT_DATABASE, describeDatabase, parseDatabaseUrl } from '../../src/store/database.js';

test('database URLs: sqlite:PATH (relative paths resolved) and postgres:// / postgresql://', () => {
  assert.deepEqual(parseDatabaseUrl('sqlite:./x.db'), { kind: 'sqlite', file: resolve('x.db') });
  assert.deepEqual(parseDatabaseUrl('sqlite:///var/lib/b.db'), { kind: 'sqlite', file: '/var/lib/b.db' });
  assert.deepEqual(parseDatabaseUrl('sqlite::memory:'), { kind: 'sqlite', file: ':memory:' });
  assert.deepEqual(parseDatabaseUrl('postgres://u:p@h:5432/db'), { kind: 'postgres', url: 'postgres://u:p@h:5432/db' });
  assert.deepEqual(parseDatabaseUrl('postgresql://h/db?sslmode=require'), { kind: 'postgres', url: 'postgresql://h/db?sslmode=require' });
});

test('a bad database URL is refused with the forms understood, and never echoes a password', () => {
  assert.throws(
    () => parseDatabaseUrl('mysql://u:secret@h/db'),
    (err: Error) => /sqlite:PATH or postgres:\/\//.test(err.message) && !err.message.includes('secret'),
  );
  assert.throws(() => parseDatabaseUrl('sqlite:'), /needs a file path/);
  assert.throws(
    () => parseDatabaseUrl('postgres://u:secret@h:5432'),
    (err: Error) => /names no database/.test(err.message) && !err.message.includes('secret'),
  );
  assert.throws(() => parseDatabaseUrl('./plain.db'), /sqlite:PATH/);
});

test('--database wins, --db FILE is the SQLite form, then DATABASE_URL, then the default; both flags at once is an error', () => {
  assert.deepEqual(chooseDatabase({ database: 'postgres://h/a' }, { DATABASE_URL: 'sqlite:./e.db' }), { kind: 'postgres', url: 'postgres://h/a' });
  assert.deepEqual(chooseDatabase({ db: 'f.db' }, { DATABASE_URL: 'postgres://h/a' }), { kind: 'sqlite', file: resolve('f.db') });
  assert.deepEqual(chooseDatabase({}, { DATABASE_URL: 'postgres://h/a' }), { kind: 'postgres', url: 'postgres://h/a' });
  assert.deepEqual(chooseDatabase({}, {}), parseDatabaseUrl(DEFAULT_DATABASE));
  assert.throws(() => chooseDatabase({ database: 'sqlite:a', db: 'b' }, {}), /not both/);
});

test('describeDatabase hides a PostgreSQL password', () => {
  assert.equal(describeDatabase({ kind: 'postgres', url: 'postgres://bs:hunter2@db:5432/bs' }), 'postgres://bs:***@db:5432/bs');
});
