import { TICK_REQUEST_FIELDS, VEC3_KEYS, type Fields, type ValueSpec } from '../../brain/index.js';

// Ticks generated from the tick schema itself, so that a field added to the schema is covered
// by every test built on these without a change here.

/** A valid value of `spec` holding every optional member, with lists of two items. */
export function fullValue(spec: ValueSpec, seed = 1): unknown {
  switch (spec.kind) {
    case 'number':
      return inRange(spec.min, spec.max, 0.25 + seed);
    case 'integer':
      return Math.round(inRange(spec.min, spec.max, 3 + seed));
    case 'boolean':
      return seed % 2 === 1;
    case 'string':
      return `s${seed}`.slice(0, spec.maxLength);
    case 'enum':
      return spec.values[seed % spec.values.length];
    case 'vec3':
      return Object.fromEntries(VEC3_KEYS.map((k, i) => [k, seed * 10 + i + 0.5]));
    case 'object':
      return fullObject(spec.fields, seed);
    case 'list':
      return [fullValue(spec.item, seed), fullValue(spec.item, seed + 1)].slice(0, spec.max);
    default: {
      const unknownKind: never = spec;
      throw new Error(`unknown kind ${JSON.stringify(unknownKind)}`);
    }
  }
}

/** A value within [min, max] near `near`, halfway into the range when `near` lies outside it. */
function inRange(min: number, max: number, near: number): number {
  if (near >= min && near <= max) return near;
  if (Number.isFinite(min) && Number.isFinite(max)) return (min + max) / 2;
  return Number.isFinite(min) ? min + near : max - near;
}

export function fullObject(fields: Fields, seed = 1): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([name, field], i) => [name, fullValue(field, seed + i)]));
}

/** A tick request holding every field the schema knows. */
export function fullTick(): Record<string, unknown> {
  return fullObject(TICK_REQUEST_FIELDS);
}

/** A field of the schema: its path in a fullTick (list members through item 0) and its spec. */
export interface SchemaField {
  path: (string | number)[];
  required: boolean;
  spec: ValueSpec;
}

/** Every field of the schema, depth first, in the schema's order. */
export function schemaFields(fields: Fields = TICK_REQUEST_FIELDS, base: (string | number)[] = []): SchemaField[] {
  const out: SchemaField[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const path = [...base, name];
    out.push({ path, required: field.required, spec: field });
    let inner: ValueSpec = field;
    const at = [...path];
    while (inner.kind === 'list') {
      inner = inner.item;
      at.push(0);
    }
    if (inner.kind === 'object') out.push(...schemaFields(inner.fields, at));
  }
  return out;
}

/** The dotted path the validator reports for a field: `snapshot.targets[0].pos`. */
export function dotted(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** A deep copy of `tick` with `change` applied to the member at `path`'s parent and key. */
export function edited(tick: unknown, path: (string | number)[], change: (parent: Record<string | number, unknown>, key: string | number) => void): unknown {
  const copy = structuredClone(tick) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  change(parent, path[path.length - 1]!);
  return copy;
}

/** A value of the right type for `spec` but outside its range or cap, or null when it has none. */
export function outOfRange(spec: ValueSpec): unknown {
  switch (spec.kind) {
    case 'number':
    case 'integer':
      if (Number.isFinite(spec.max) && spec.max < Number.MAX_SAFE_INTEGER) return spec.max + 1;
      if (Number.isFinite(spec.min) && spec.min > -Number.MAX_SAFE_INTEGER) return spec.min - 1;
      return null;
    case 'string':
      return 'x'.repeat(spec.maxLength + 1);
    case 'enum':
      return `not-${spec.values[0]}`;
    case 'list':
      return Array.from({ length: spec.max + 1 }, (_, i) => fullValue(spec.item, i));
    default:
      return null;
  }
}
