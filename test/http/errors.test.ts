import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS, HttpError, type ErrorCode } from '../../src/http/errors.js';
import { repoRoot } from '../helpers/paths.js';

/** The error table of docs/errors.md: rows of `| \`code\` | status | meaning |`. */
function docsErrorTable(): Map<string, number> {
  const page = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8');
  const rows = new Map<string, number>();
  for (const line of page.split('\n')) {
    const m = /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (m) rows.set(m[1]!, Number(m[2]));
  }
  return rows;
}

test('the error table of docs/errors.md lists exactly the catalogue, with the same statuses', () => {
  const table = docsErrorTable();
  const catalogue = new Map(Object.entries(ERRORS).map(([code, e]) => [code, e.status]));
  assert.deepEqual([...table.entries()].sort(), [...catalogue.entries()].sort());
});

test('every catalogue entry builds the documented error shape', () => {
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const err = new HttpError(code);
    assert.equal(err.status, ERRORS[code].status);
    assert.deepEqual(err.toBody(), { error: { code, message: ERRORS[code].message } });
  }
  const withDetails = new HttpError('validation_failed', 'bad', { details: [{ path: 'a.b', message: 'is required' }] });
  assert.deepEqual(withDetails.toBody(), { error: { code: 'validation_failed', message: 'bad', details: [{ path: 'a.b', message: 'is required' }] } });
});
