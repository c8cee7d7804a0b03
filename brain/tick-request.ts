import { isPlainObj } from './json.js';
import { TICK_LIMITS, TICK_REQUEST_FIELDS, type Fields, type ListSpec, type ObjectSpec, type ValueSpec } from './tick-schema.js';
import type { Problem, TickRequest, Vec3 } from './types.js';

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
  if (typeof v === 'object' && !isPlainObj(v)) return 'an extension value';
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
    if (max >= Number.MAX_SAFE_INTEGER) return `must be at least ${min}, got ${v}`;
    return `must be between ${min} and ${max}, got ${v}`;
  }
  return null;
}

function integerIssue(v: unknown, min: number, max: number): string | null {
  const issue = numberIssue(v, min, max);
  if (issue) return issue;
  return Number.isInteger(v) ? null : `must be an integer, got ${v as number}`;
}

/**
 * The schema compiled once at load into the walk the validator takes: each object's members
 * as a list with their own compiled values, so a tick costs no table lookup.
 */
type Node =
  | { readonly kind: 'leaf'; readonly spec: Exclude<ValueSpec, ObjectSpec | ListSpec> }
  | { readonly kind: 'object'; readonly members: readonly Member[] }
  | { readonly kind: 'list'; readonly max: number; readonly item: Node };
interface Member {
  readonly name: string;
  readonly required: boolean;
  readonly node: Node;
}

function compile(spec: ValueSpec): Node {
  if (spec.kind === 'object') return { kind: 'object', members: compileMembers(spec.fields) };
  if (spec.kind === 'list') return { kind: 'list', max: spec.max, item: compile(spec.item) };
  return { kind: 'leaf', spec };
}

function compileMembers(fields: Fields): Member[] {
  return Object.entries(fields).map(([name, field]) => ({ name, required: field.required, node: compile(field) }));
}

const REQUEST = compileMembers(TICK_REQUEST_FIELDS);

/** The path of member `key` (a name, or an index in a list) of the value at `base`. */
function pathOf(base: string, key: string | number): string {
  return typeof key === 'number' ? item(base, key) : join(base, key);
}

/** The checked copy of a present value at base/key; problems are added to p. */
function value(node: Node, v: unknown, base: string, key: string | number, p: Problems): unknown {
  switch (node.kind) {
    case 'leaf':
      return leaf(node.spec, v, base, key, p);
    case 'object':
      if (!isPlainObj(v)) {
        p.add(pathOf(base, key), `must be an object, got ${typeName(v)}`);
        return v;
      }
      return object(node.members, v, pathOf(base, key), p);
    case 'list': {
      if (!Array.isArray(v)) {
        p.add(pathOf(base, key), `must be an array, got ${typeName(v)}`);
        return undefined;
      }
      if (v.length > node.max) {
        p.add(pathOf(base, key), `must have at most ${node.max} items, got ${v.length}`);
        return undefined;
      }
      const path = pathOf(base, key);
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) out.push(value(node.item, v[i], path, i, p));
      return out;
    }
    default: {
      const unknownNode: never = node;
      throw new Error(`tick schema: unknown node ${JSON.stringify(unknownNode)}`);
    }
  }
}

function leaf(spec: Exclude<ValueSpec, ObjectSpec | ListSpec>, v: unknown, base: string, key: string | number, p: Problems): unknown {
  switch (spec.kind) {
    case 'number': {
      const issue = numberIssue(v, spec.min, spec.max);
      if (issue) p.add(pathOf(base, key), issue);
      return v;
    }
    case 'integer': {
      const issue = integerIssue(v, spec.min, spec.max);
      if (issue) p.add(pathOf(base, key), issue);
      return v;
    }
    case 'boolean':
      if (typeof v !== 'boolean') p.add(pathOf(base, key), `must be a boolean, got ${typeName(v)}`);
      return v;
    case 'string':
      if (typeof v !== 'string') p.add(pathOf(base, key), `must be a string, got ${typeName(v)}`);
      else if (v.length > spec.maxLength) p.add(pathOf(base, key), `must be at most ${spec.maxLength} characters, got ${v.length}`);
      return v;
    case 'enum':
      if (typeof v !== 'string' || !spec.values.includes(v)) p.add(pathOf(base, key), `must be one of ${spec.values.join(', ')}`);
      return v;
    case 'vec3':
      return vec3(v, base, key, p);
    default: {
      const unknownKind: never = spec;
      throw new Error(`tick schema: unknown kind ${JSON.stringify(unknownKind)}`);
    }
  }
}

function vec3(v: unknown, base: string, key: string | number, p: Problems): Vec3 {
  if (!isPlainObj(v)) {
    p.add(pathOf(base, key), `must be an object {x, y, z}, got ${typeName(v)}`);
    return v as unknown as Vec3;
  }
  const x = v.x;
  const y = v.y;
  const z = v.z;
  if (typeof x !== 'number' || typeof y !== 'number' || typeof z !== 'number' || !Number.isFinite(x + y + z)) {
    const path = pathOf(base, key);
    coordinate(x, 'x', path, p);
    coordinate(y, 'y', path, p);
    coordinate(z, 'z', path, p);
  }
  return { x: x as number, y: y as number, z: z as number };
}

function coordinate(v: unknown, key: string, base: string, p: Problems): void {
  const issue = numberIssue(v, -Infinity, Infinity);
  if (issue) p.add(join(base, key), v === undefined ? 'is required' : issue);
}

/** A fresh object of the known members of `v`, in the schema's order; an absent optional member is left out. */
function object(members: readonly Member[], v: Record<string, unknown>, base: string, p: Problems): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let k = 0; k < members.length; k++) {
    const m = members[k]!;
    const member = v[m.name];
    if (member === undefined) {
      if (m.required) p.add(join(base, m.name), 'is required');
      continue;
    }
    const checked = value(m.node, member, base, m.name, p);
    if (checked !== undefined) out[m.name] = checked;
  }
  return out;
}

/** Validates a decoded /tick body; every problem carries the dotted path of its field. */
export function parseTickRequest(input: unknown): TickParse {
  const p = new Problems();
  if (!isPlainObj(input)) {
    p.add('', `the request must be an object {snapshot, profile}, got ${typeName(input)}`);
    return { ok: false, problems: p.list };
  }
  const request = object(REQUEST, input, '', p);
  if (p.list.length > 0) return { ok: false, problems: p.list };
  // A missing profile is the empty one: traits then come from the bundle's population.
  request.profile ??= {};
  return { ok: true, request: request as unknown as TickRequest };
}
