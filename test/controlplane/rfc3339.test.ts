import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRfc3339 } from '../../src/http/validate.js';

// The reading of a report's ts is hand-written (it runs on every report); this is the regular
// expression it replaced, with the same range checks, as the reference it must agree with.
const FORM = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function reference(ts: string): boolean {
  const m = FORM.exec(ts);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS[month - 1]!)) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return !Number.isNaN(Date.parse(ts));
}

test('a report ts is read as RFC 3339 exactly as the regular expression read it, on valid, invalid and mutated timestamps', () => {
  const seeds = [
    '2026-11-29T02:00:00Z',
    '2024-02-29T23:59:59.123456+05:30',
    '2026-02-30T00:00:00Z',
    '2026-01-01t12:00:00z',
    '2026-01-01T24:00:00Z',
    '0000-01-01T00:00:00-00:00',
    '2026-01-01T12:00:00.Z',
    '2026-01-01T12:00:00+2400',
    '2026-01-01T12:00:00+23:59',
  ];
  for (const ts of seeds) assert.equal(isRfc3339(ts), reference(ts), ts);
  assert.equal(isRfc3339('2024-02-29T23:59:59.123456+05:30'), true);
  assert.equal(isRfc3339('2026-02-30T00:00:00Z'), false);
  // A fixed pseudo-random walk of edits (replace, insert, delete) over the seeds.
  const alphabet = '0123456789-:T tZz+.\u0663x\n';
  let state = 0x2545f491;
  const next = (k: number): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % k;
  };
  for (let k = 0; k < 50_000; k++) {
    const chars = seeds[next(seeds.length)]!.split('');
    for (let e = 1 + next(3); e > 0; e--) {
      const op = next(3);
      const at = next(chars.length + 1);
      const c = alphabet[next(alphabet.length)]!;
      if (op === 0) chars[at] = c;
      else if (op === 1) chars.splice(at, 0, c);
      else chars.splice(at, 1);
    }
    const ts = chars.join('');
    assert.equal(isRfc3339(ts), reference(ts), JSON.stringify(ts));
  }
});
