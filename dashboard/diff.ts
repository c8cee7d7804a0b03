export interface Change {
  path: string;
  before: unknown;
  after: unknown;
}

/** A field-level diff of two JSON values: every leaf path whose value differs. */
export function diffJson(before: unknown, after: unknown, path = ''): Change[] {
  if (isObj(before) && isObj(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffJson(before[k], after[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: Change[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) out.push(...diffJson(before[i], after[i], `${path}[${i}]`));
    return out;
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, before, after }];
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
