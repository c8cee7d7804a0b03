import { test } from 'node:test';
import { freshDatabase } from '../helpers/postgres.js';
import { fuzzServe } from './route-fuzz-harness.js';

// On PostgreSQL the stores differ and a signed pull's shortcut answers with a promise (it
// awaits the shared replay record), so the same requests go down other paths. (Its own file:
// the four fuzzes of one file outlasted the per-file time limit on a loaded machine.)
test('every route of serve on PostgreSQL answers malformed input in the error shape, and the process goes on', { timeout: 120_000 }, async () =>
  fuzzServe({ kind: 'postgres', url: await freshDatabase() }),
);
