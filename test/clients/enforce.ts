/**
 * Runs the pure part of the DayZ module's Enforce Script (the JSON builder) here: a
 * transliteration of the subset those files use into JavaScript, run in a VM context whose
 * strings, arrays and maps have Enforce's methods. Enforce strings are bytes, so strings go in
 * as UTF-8 byte strings (one char per byte, `ToAscii` signed as Enforce's) and come out the
 * same way; `float` fields hold 32-bit floats; `int / int` divides as integers.
 *
 * It supports exactly what BrainstemJson.c and BrainstemTick.c use (classes with fields and
 * static or instance methods, locals, for/while/if, `+=`, `++`, string/array/map methods) and
 * throws on anything it does not translate, so a change to those files that leaves the subset
 * fails loudly instead of passing untested.
 */
import { runInContext, createContext } from 'node:vm';

interface Member {
  kind: 'field' | 'method';
  isStatic: boolean;
  type: string;
  name: string;
  init?: string;
  params?: { type: string; name: string; init?: string }[];
  body?: string;
}

const SCALARS = new Set(['string', 'int', 'float', 'bool', 'vector']);

/** Source without `//` comments (no string in these files contains `//`). */
function stripComments(text: string): string {
  return text.replace(/\/\/[^\n]*/g, '');
}

/** The index just past the brace block opening at `open`. */
function blockEnd(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  throw new Error('unbalanced braces');
}

function defaultOf(type: string): string {
  if (type === 'string') return '""';
  if (type === 'int' || type === 'float') return '0';
  if (type === 'bool') return 'false';
  if (type === 'vector') return '[0, 0, 0]';
  return 'null';
}

function parseMembers(body: string): Member[] {
  const members: Member[] = [];
  let i = 0;
  const head = /\s*((?:static\s+|const\s+|override\s+|protected\s+|ref\s+)*)([\w<>, ]+?)\s+(\w+)\s*(\(|=|;)/y;
  while (i < body.length) {
    if (/^\s*$/.test(body.slice(i))) break;
    head.lastIndex = i;
    const m = head.exec(body);
    if (!m) throw new Error(`enforce: cannot read a member at: ${body.slice(i, i + 60)}`);
    const mods = m[1]!;
    const type = m[2]!.trim();
    const name = m[3]!;
    if (m[4] === '(') {
      const close = body.indexOf(')', head.lastIndex);
      const params = body
        .slice(head.lastIndex, close)
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .map((p) => {
          const pm = /^(?:out\s+|ref\s+)*([\w<>, ]+?)\s+(\w+)(?:\s*=\s*(.+))?$/.exec(p);
          if (!pm) throw new Error(`enforce: cannot read parameter ${p}`);
          return { type: pm[1]!, name: pm[2]!, init: pm[3] };
        });
      const open = body.indexOf('{', close);
      const end = blockEnd(body, open);
      members.push({ kind: 'method', isStatic: mods.includes('static'), type, name, params, body: body.slice(open + 1, end - 1) });
      i = end;
    } else {
      let init: string | undefined;
      let end = head.lastIndex;
      if (m[4] === '=') {
        const semi = body.indexOf(';', end);
        init = body.slice(end, semi).trim();
        end = semi;
      }
      members.push({ kind: 'field', isStatic: mods.includes('static'), type, name, init });
      i = end + 1;
    }
  }
  return members;
}

interface Scope {
  className: string;
  /** Instance fields and methods, read without `this.` in Enforce. */
  instance: Set<string>;
  /** Static fields and methods, read without the class name inside the class. */
  statics: Set<string>;
  ints: Set<string>;
  locals: Set<string>;
}

/** One expression or statement line, Enforce to JavaScript (string literals left as they are). */
function expression(src: string, scope: Scope): string {
  const literals: string[] = [];
  let out = src.replace(/"(?:[^"\\]|\\.)*"/g, (lit) => {
    literals.push(lit);
    return `\u0000${literals.length - 1}\u0000`;
  });
  out = out.replace(/new (?:array|set)<[^;()]*>(?:\(\))?/g, 'new EArray()').replace(/new map<[^;()]*>(?:\(\))?/g, 'new EMap()');
  // map.Find(key, out value): true and the value, or false.
  out = out.replace(/([\w.[\]]+)\.Find\((\w+), (\w+)\)/g, '((__found = $1.FindOut($2)) !== undefined && (($3 = __found), true))');
  // int / int-literal divides as integers.
  out = out.replace(/\b(\w+) \/ (\d+)\b/g, (all, a: string, b: string) => (scope.ints.has(a) ? `Math.trunc(${a} / ${b})` : all));
  // Members read without `this.` or the class name.
  out = out.replace(/(^|[^.\w\u0000])([A-Za-z_]\w*)\b/g, (all, pre: string, id: string) => {
    if (scope.locals.has(id)) return all;
    if (scope.instance.has(id)) return `${pre}this.${id}`;
    if (scope.statics.has(id)) return `${pre}${scope.className}.${id}`;
    return all;
  });
  return out.replace(/\u0000(\d+)\u0000/g, (_, i: string) => literals[Number(i)]!);
}

function translateBody(
  body: string,
  params: { type: string; name: string }[],
  base: Omit<Scope, 'ints' | 'locals'>,
  fieldTypes: Map<string, string>,
  returns: string,
): string {
  const scope: Scope = { ...base, ints: new Set(params.filter((p) => p.type === 'int').map((p) => p.name)), locals: new Set(params.map((p) => p.name)) };
  for (const [name, type] of fieldTypes) if (type === 'int') scope.ints.add(name);
  const out: string[] = [];
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const decl = /^(?:ref\s+)?(string|int|float|bool|vector|array<[^>]*>|set<[^>]*>|map<[^>]*>|[A-Z]\w*)\s+(\w+)\s*(?:=\s*(.+))?;$/.exec(line);
    if (decl) {
      const [, type, name, init] = decl;
      const value = init !== undefined ? expression(init, scope) : defaultOf(type!);
      scope.locals.add(name!);
      if (type === 'int') scope.ints.add(name!);
      out.push(`let ${name} = ${value};`);
      continue;
    }
    const each = /^foreach \((?:\w+) (\w+) : (.+)\)$/.exec(line);
    if (each) {
      scope.locals.add(each[1]!);
      out.push(`for (const ${each[1]} of ${expression(each[2]!, scope)})`);
      continue;
    }
    const forLoop = /^for \((?:int )?(\w+) = (.+?); (.+?); (.+?)\)$/.exec(line);
    if (forLoop) {
      const [, v, init, cond, step] = forLoop;
      scope.locals.add(v!);
      scope.ints.add(v!);
      out.push(`for (let ${v} = ${expression(init!, scope)}; ${expression(cond!, scope)}; ${expression(step!, scope)})`);
      continue;
    }
    // A bool function returns a bool (JavaScript's && and || return an operand).
    const boolReturn = returns === 'bool' ? /^return (.+);$/.exec(line) : null;
    if (boolReturn) {
      out.push(`return !!(${expression(boolReturn[1]!, scope)});`);
      continue;
    }
    if (/^(if|else if|while) \(/.test(line) || /^(else|\{|\})$/.test(line) || /^return\b/.test(line) || line.endsWith(';')) {
      out.push(expression(line, scope));
      continue;
    }
    throw new Error(`enforce: cannot translate the line: ${line}`);
  }
  return 'let __found;\n' + out.join('\n');
}

/** JavaScript for every class of `sources`, in order, defining them in the context. */
export function transliterate(sources: string[], skip: string[] = []): string {
  const js: string[] = [];
  for (const source of sources) {
    const text = stripComments(source);
    for (const m of text.matchAll(/^class (\w+)(?:\s*:\s*(\w+))?\s*\n\{/gm)) {
      const name = m[1]!;
      const open = m.index + m[0].length - 1;
      const members = parseMembers(text.slice(open + 1, blockEnd(text, open) - 1));
      const fieldTypes = new Map(members.filter((x) => x.kind === 'field' && !x.isStatic).map((x) => [x.name, x.type]));
      const instance = new Set(members.filter((x) => !x.isStatic).map((x) => x.name));
      const statics = new Set(members.filter((x) => x.isStatic).map((x) => x.name));
      const empty: Scope = { className: name, instance: new Set<string>(), statics, ints: new Set<string>(), locals: new Set<string>() };
      const parts: string[] = [`class ${name} {`, '  constructor() {'];
      for (const f of members.filter((x) => x.kind === 'field' && !x.isStatic)) {
        parts.push(`    this.${f.name} = ${f.init !== undefined ? expression(f.init, empty) : defaultOf(f.type)};`);
      }
      parts.push('  }');
      for (const meth of members.filter((x) => x.kind === 'method' && !skip.includes(`${name}.${x.name}`))) {
        if (!SCALARS.has(meth.type) && meth.type !== 'void' && !/^[A-Z]/.test(meth.type)) throw new Error(`enforce: return type ${meth.type}`);
        const params = meth.params!.map((p) => (p.init !== undefined ? `${p.name} = ${p.init}` : p.name)).join(', ');
        parts.push(
          `  ${meth.isStatic ? 'static ' : ''}${meth.name}(${params}) {\n${translateBody(meth.body!, meth.params!, { className: name, instance: meth.isStatic ? new Set<string>() : instance, statics }, meth.isStatic ? new Map<string, string>() : fieldTypes, meth.type)}\n  }`,
        );
      }
      parts.push('}');
      for (const f of members.filter((x) => x.kind === 'field' && x.isStatic))
        parts.push(`${name}.${f.name} = ${f.init !== undefined ? expression(f.init, empty) : defaultOf(f.type)};`);
      parts.push(`globalThis.${name} = ${name};`);
      js.push(parts.join('\n'));
    }
  }
  return js.join('\n\n');
}

/** A context with Enforce's string, array, map and Math, and the transliterated classes. */
export function enforceContext(sources: string[], skip: string[] = []): Record<string, any> {
  const context = createContext({});
  runInContext(
    `
    String.prototype.Length = function () { return this.length; };
    String.prototype.Get = function (i) { return this.charAt(i); };
    String.prototype.Substring = function (start, len) { return this.substr(start, len); };
    String.prototype.ToAscii = function () { const c = this.charCodeAt(0); return c > 127 ? c - 256 : c; };
    String.prototype.IndexOf = function (s) { return this.indexOf(s); };
    globalThis.vector = { DistanceSq: (a, b) => (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2 };
    Number.prototype.ToString = function () { return String(this); };
    class EArray extends Array {
      Count() { return this.length; }
      Insert(v) { this.push(v); return this.length - 1; }
      InsertAt(v, i) { this.splice(i, 0, v); }
      Get(i) { return this[i]; }
      Find(v) { return this.indexOf(v); }
      Clear() { this.length = 0; }
      // Enforce's Remove(index) moves the last element into the gap.
      Remove(i) { this[i] = this[this.length - 1]; this.pop(); }
    }
    class EMap {
      constructor() { this.keys = []; this.values = []; }
      Set(k, v) { const i = this.keys.indexOf(k); if (i >= 0) this.values[i] = v; else { this.keys.push(k); this.values.push(v); } }
      Get(k) { const i = this.keys.indexOf(k); return i >= 0 ? this.values[i] : null; }
      FindOut(k) { const i = this.keys.indexOf(k); return i >= 0 ? this.values[i] : undefined; }
      Remove(k) { const i = this.keys.indexOf(k); if (i >= 0) { this.keys.splice(i, 1); this.values.splice(i, 1); } }
      Clear() { this.keys = []; this.values = []; }
      Count() { return this.keys.length; }
      GetKey(i) { return this.keys[i]; }
      GetElement(i) { return this.values[i]; }
    }
    globalThis.EArray = EArray;
    globalThis.EMap = EMap;
    const JsMath = Math;
    globalThis.Math = Object.assign(Object.create(JsMath), { Floor: JsMath.floor, Round: (x) => JsMath.sign(x) * JsMath.round(JsMath.abs(x)), trunc: JsMath.trunc, fround: JsMath.fround });
    `,
    context,
  );
  runInContext(transliterate(sources, skip), context);
  return context as Record<string, any>;
}

/** A UTF-8 string as Enforce holds it: one char per byte. */
export const toBytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
/** Enforce's bytes back to a string. */
export const fromBytes = (s: string): string => Buffer.from(s, 'latin1').toString('utf8');
