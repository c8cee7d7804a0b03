import { validateBundle } from '../../brain/index.js';
import { bundleSizeProblem } from '../bundles.js';
import { Fields, unstorableText } from '../http/validate.js';
import { PLANS } from '../identity/types.js';

/**
 * The API's own rules for the columns a client writes through it, applied to each row
 * `migrate-store` copies: a row no API request could have made (a plan edited by hand to
 * `god-mode`, a bundle that no longer validates, a text with a NUL) is named and stops the
 * copy, rather than landing in a database whose services assume it cannot exist.
 */
type RowRule = (row: Record<string, unknown>) => { column: string; message: string } | null;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Runs one Fields check (the validator the routes use) and reports its first problem. */
function fields(check: (f: Fields) => void): RowRule {
  return (row) => {
    const f = new Fields(row);
    check(f);
    const d = f.details[0];
    return d ? { column: d.path, message: d.message } : null;
  };
}

function oneOf(column: string, allowed: readonly string[]): RowRule {
  return (row) => {
    const v = row[column];
    return typeof v === 'string' && allowed.includes(v) ? null : { column, message: `must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}` };
  };
}

const RULES: Readonly<Record<string, readonly RowRule[]>> = {
  tenants: [fields((f) => f.string('name', { required: true, max: 200 })), oneOf('plan', PLANS), oneOf('status', ['active', 'suspended'])],
  users: [fields((f) => f.string('email', { required: true, max: 254, pattern: EMAIL, patternHint: 'must be an e-mail address' }))],
  cp_servers: [fields((f) => f.string('name', { required: true, max: 200 }))],
  cp_config_versions: [
    (row) => {
      let value: unknown;
      try {
        value = JSON.parse(String(row.bundle));
      } catch (err) {
        return { column: 'bundle', message: `is not JSON: ${(err as Error).message}` };
      }
      const check = validateBundle(value);
      if (!check.ok) return { column: 'bundle', message: `fails validation: ${check.problems[0]!.path || '(bundle)'} ${check.problems[0]!.message}` };
      const size = bundleSizeProblem(check.bundle);
      return size ? { column: 'bundle', message: size.message } : null;
    },
  ],
  cp_checkouts: [oneOf('status', ['open', 'complete', 'expired'])],
};

/**
 * The first problem of a row of `table` (columns by name), named by table, row and column; null
 * when it passes. Every text value must also be storable as the API requires of every string
 * (well-formed Unicode, no NUL, which PostgreSQL refuses anyway).
 */
export function rowProblem(table: string, row: Record<string, unknown>): string | null {
  for (const [column, v] of Object.entries(row)) {
    if (typeof v !== 'string') continue;
    const unstorable = unstorableText(v);
    if (unstorable !== null) return describe(table, row, column, unstorable);
  }
  for (const rule of RULES[table] ?? []) {
    const p = rule(row);
    if (p) return describe(table, row, p.column, p.message);
  }
  return null;
}

function describe(table: string, row: Record<string, unknown>, column: string, message: string): string {
  const key =
    'id' in row
      ? `id ${JSON.stringify(row.id)}`
      : 'seq' in row
        ? `seq ${JSON.stringify(row.seq)}`
        : Object.entries(row)
            .slice(0, 2)
            .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
            .join(', ');
  return `table ${table}, row ${key}, column ${column}: ${message}`;
}
