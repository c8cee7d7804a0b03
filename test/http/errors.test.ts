import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS, HttpError, type ErrorCode } from '../../src/http/errors.js';
import { repoRoot } from '../helpers/paths.js';

/** The README's error table: rows of `| \`code\` | status | meaning |` under "## Errors". */
function readmeErrorTable(): Map<string, number> {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Errors'));
  const end = section.indexOf('\n## ', 5);
  const rows = new Map<string, number>();
  for (const line of (end > 0 ? section.slice(0, end) : section).split('\n')) {
    const m = /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (m) rows.set(m[1]!, Number(m[2]));
  }
  return rows;
}

test('the README error table lists exactly the catalogue, with the same statuses', () => {
  const table = readmeErrorTable();
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
