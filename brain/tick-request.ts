import { isObj } from './json.js';
import { TICK_LIMITS, TICK_REQUEST_FIELDS, type Fields, type ListSpec, type ValueSpec } from './tick-schema.js';
import type { Problem, TickRequest } from './types.js';

export { TICK_LIMITS } from './tick-schema.js';

/**
 * The validator of a /tick request, walking the request's schema (tick-schema.ts): a field
 * added there is checked here with no further change. Path strings are built only when a
 * problem is found, except an object's own path, which its members' paths start with. The
 * result is a fresh object holding only known fields, in the schema's order, so nothing the
 * caller sent beyond the contract (`__proto__`, `constructor`, extra keys) reaches the brain.
 * It is the exact path: the sidecar's fast readers answer for well-formed ticks and are held
 * to give what this gives.
 */

export type TickParse = { ok: true; request: TickRequest } | { ok: false; problems: Problem[] };

class Problems {
  readonly list: Problem[] = [];
  add(path: string, message: string): void {
    if (this.list.length < TICK_LIMITS.maxProblems) this.list.push({ path, message });
  }
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (ArrayBuffer.isView(v)) return 'binary data';
  if (typeof v === 'object' && !isObj(v)) return 'an extension value';
  return typeof v;
}

function join(base: string, field: string): string {
  return base ? `${base}.${field}` : field;
}

function item(base: string, index: number): string {
  return `${base}[${index}]`;
}

/** Null when v is a finite number within [min, max]; otherwise the reason. */
function numberIssue(v: unknown, min: number, max: number): string | null {
  if (typeof v !== 'number') return `must be a number, got ${typeName(v)}`;
  if (v !== v || v === Infinity || v === -Infinity) return `must be a finite number, got ${v}`;
  if (v < min || v > max) {
    // A bound that is only the edge of exact integers is left out of the message; the other is named.
    if (max >= Number.MAX_SAFE_INTEGER && v < min) return `must be at least ${min}, got ${v}`;
    if (min <= -Number.MAX_SAFE_INTEGER && v > max) return `must be at most ${max}, got ${v}`;
    return `must be between ${min} and ${max}, got ${v}`;
  }
  return null;
}

function integerIssue(v: unknown, min: number, max: number): string | null {
  const issue = numberIssue(v, min, max);
  if (issue) return issue;
  return Number.isInteger(v) ? null : `must be an integer, got ${v as number}`;
}

// The checkers take the value already loaded by the generated code with a literal property
// name: loading o[key] for objects of many shapes made every load megamorphic (slow).

/** Reports a problem at base/key; builds the path only then. */
function fail(base: string, key: string | number, message: string, p: Problems): void {
  p.add(typeof key === 'number' ? item(base, key) : join(base, key), message);
}

function num(v: unknown, base: string, key: string | number, min: number, max: number, p: Problems): unknown {
  const issue = numberIssue(v, min, max);
  if (issue) fail(base, key, issue, p);
  return v;
}

function int(v: unknown, base: string, key: string | number, min: number, max: number, p: Problems): unknown {
  const issue = integerIssue(v, min, max);
  if (issue) fail(base, key, issue, p);
  return v;
}

function bool(v: unknown, base: string, key: string | number, p: Problems): unknown {
  if (typeof v !== 'boolean') fail(base, key, `must be a boolean, got ${typeName(v)}`, p);
  return v;
}

function str(v: unknown, base: string, key: string | number, maxLength: number, p: Problems): unknown {
  if (typeof v !== 'string') fail(base, key, `must be a string, got ${typeName(v)}`, p);
  else if (v.length > maxLength) fail(base, key, `must be at most ${maxLength} characters, got ${v.length}`, p);
  return v;
}

function enumOf(v: unknown, base: string, key: string | number, values: readonly string[], p: Problems): unknown {
  if (typeof v !== 'string' || !values.includes(v)) fail(base, key, `must be one of ${values.join(', ')}`, p);
  return v;
}

const MAX_COORDINATE = TICK_LIMITS.maxCoordinate;

function vec3(v: unknown, base: string, key: string | number, p: Problems): unknown {
  if (!isObj(v)) {
    fail(base, key, `must be an object {x, y, z}, got ${typeName(v)}`, p);
    return v;
  }
  const x = v.x;
  const y = v.y;
  const z = v.z;
  if (
    typeof x !== 'number' ||
    typeof y !== 'number' ||
    typeof z !== 'number' ||
    !(x <= MAX_COORDINATE && x >= -MAX_COORDINATE && y <= MAX_COORDINATE && y >= -MAX_COORDINATE && z <= MAX_COORDINATE && z >= -MAX_COORDINATE)
  ) {
    const path = typeof key === 'number' ? item(base, key) : join(base, key);
    coordinate(x, 'x', path, p);
    coordinate(y, 'y', path, p);
    coordinate(z, 'z', path, p);
  }
  return { x, y, z };
}

function coordinate(v: unknown, key: string, base: string, p: Problems): void {
  const issue = numberIssue(v, -MAX_COORDINATE, MAX_COORDINATE);
  if (issue) p.add(join(base, key), v === undefined ? 'is required' : issue);
}

/** Whether v is an object to descend into; reports it at base/key when not. */
function isObject(v: unknown, base: string, key: string | number, p: Problems): v is Record<string, unknown> {
  if (isObj(v)) return true;
  fail(base, key, `must be an object, got ${typeName(v)}`, p);
  return false;
}

/** Whether v is a list within its cap; reports it at base/key when not. */
function isList(v: unknown, base: string, key: string | number, max: number, p: Problems): v is unknown[] {
  if (!Array.isArray(v)) fail(base, key, `must be an array, got ${typeName(v)}`, p);
  else if (v.length > max) fail(base, key, `must have at most ${max} items, got ${v.length}`, p);
  else return true;
  return false;
}

const HELPERS = { num, int, bool, str, enumOf, vec3, isObject, isList, join, item };

type ObjectCheck = (v: Record<string, unknown>, base: string, p: Problems) => Record<string, unknown>;

/**
 * The validator compiled from the schema once, at load: one function per object and per
 * list of the schema, each reading its members with literal property names and building its
 * result as one object literal, in the schema's order. A walk over the tables at every tick
 * measured 2.5 times slower (every member load and store megamorphic). The source is
 * generated only from the schema's own names and numbers, never from input.
 */
function compile(fields: Fields): { check: ObjectCheck; source: string } {
  const functions: string[] = [];
  const enums: (readonly string[])[] = [];
  const literal = (n: number): string => (Number.isNaN(n) ? 'NaN' : String(n));
  /** The path of member `key` of `base`: `key` is a quoted name, or the list index variable `i`. */
  const path = (base: string, key: string): string => (key.startsWith('"') ? `join(${base}, ${key})` : `item(${base}, ${key})`);

  /** An expression checking the value in `v` at base/key, its result the checked value or undefined. */
  const expression = (spec: ValueSpec, v: string, base: string, key: string): string => {
    switch (spec.kind) {
      case 'number':
        return `num(${v}, ${base}, ${key}, ${literal(spec.min)}, ${literal(spec.max)}, p)`;
      case 'integer':
        return `int(${v}, ${base}, ${key}, ${literal(spec.min)}, ${literal(spec.max)}, p)`;
      case 'boolean':
        return `bool(${v}, ${base}, ${key}, p)`;
      case 'string':
        return `str(${v}, ${base}, ${key}, ${literal(spec.maxLength)}, p)`;
      case 'enum':
        enums.push(spec.values);
        return `enumOf(${v}, ${base}, ${key}, E[${enums.length - 1}], p)`;
      case 'vec3':
        return `vec3(${v}, ${base}, ${key}, p)`;
      case 'object': {
        const name = object(spec.fields);
        return `(isObject(${v}, ${base}, ${key}, p) ? ${name}(${v}, ${path(base, key)}, p) : ${v})`;
      }
      case 'list': {
        const name = list(spec);
        return `${name}(${v}, ${base}, ${key}, p)`;
      }
      default: {
        const unknownKind: never = spec;
        throw new Error(`tick schema: unknown kind ${JSON.stringify(unknownKind)}`);
      }
    }
  };

  const list = (spec: ListSpec): string => {
    const name = `list${functions.length}`;
    functions.push('');
    const at = functions.length - 1;
    functions[at] = `function ${name}(v, base, key, p) {
  if (!isList(v, base, key, ${literal(spec.max)}, p)) return undefined;
  const path = typeof key === 'number' ? item(base, key) : join(base, key);
  const out = [];
  for (let i = 0; i < v.length; i++) out.push(${expression(spec.item, 'v[i]', 'path', 'i')});
  return out;
}`;
    return name;
  };

  const object = (members: Fields): string => {
    const name = `object${functions.length}`;
    functions.push('');
    const at = functions.length - 1;
    const entries = Object.entries(members);
    const lines: string[] = [];
    entries.forEach(([member, field], k) => {
      const key = JSON.stringify(member);
      lines.push(`  const m${k} = v[${key}];`);
      lines.push(`  let r${k};`);
      const check = `r${k} = ${expression(field, `m${k}`, 'base', key)};`;
      if (field.required) lines.push(`  if (m${k} === undefined) p.add(join(base, ${key}), 'is required');`, `  else ${check}`);
      else lines.push(`  if (m${k} !== undefined) ${check}`);
    });
    const required = entries.flatMap(([member, field], k) => (field.required ? [`${JSON.stringify(member)}: r${k}`] : []));
    lines.push(`  const out = { ${required.join(', ')} };`);
    entries.forEach(([member, field], k) => {
      if (!field.required) lines.push(`  if (r${k} !== undefined) out[${JSON.stringify(member)}] = r${k};`);
    });
    lines.push('  return out;');
    functions[at] = `function ${name}(v, base, p) {\n${lines.join('\n')}\n}`;
    return name;
  };

  const top = object(fields);
  const source = `const { ${Object.keys(HELPERS).join(', ')} } = H;\n${functions.join('\n')}\nreturn ${top};`;
  // oxlint-disable-next-line typescript/no-implied-eval -- the source is built from the schema's own names and numbers, never from input.
  const check = new Function('H', 'E', source)(HELPERS, enums) as ObjectCheck;
  return { check, source };
}

const compiled = compile(TICK_REQUEST_FIELDS);

/** Validates a decoded /tick body; every problem carries the dotted path of its field. */
export function parseTickRequest(input: unknown): TickParse {
  const p = new Problems();
  if (!isObj(input)) {
    p.add('', `the request must be an object {snapshot, profile}, got ${typeName(input)}`);
    return { ok: false, problems: p.list };
  }
  const request = compiled.check(input, '', p);
  if (p.list.length > 0) return { ok: false, problems: p.list };
  // A missing profile is the empty one: traits then come from the bundle's population.
  request.profile ??= {};
  return { ok: true, request: request as unknown as TickRequest };
}
