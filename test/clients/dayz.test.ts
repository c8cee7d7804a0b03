/**
 * The DayZ module is Enforce Script, which only DayZ runs. These checks hold its source to the
 * same fixtures the Lua, Python and C# clients run against: every key the tick fixture puts
 * on the wire is written by its builder, every field of the expected intents is declared with
 * a matching type where JsonSerializer fills it, and the escaping covers what JSON requires.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientsDir, repliesFixture, ticksFixture } from './helpers.js';

const SCRIPTS = join(clientsDir, 'dayz', 'scripts', '5_Mission', 'Brainstem');
const files = readdirSync(SCRIPTS).filter((f) => f.endsWith('.c'));
const source = (name: string) => readFileSync(join(SCRIPTS, name), 'utf8');

/** Source without comments and string literals (their text replaced by nothing). */
function code(text: string): string {
  return text.replace(/\/\/[^\n]*/g, '').replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
}

/** The fields each top-level class declares: name -> Enforce type. */
function classFields(text: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const m of text.matchAll(/^class (\w+)[^\n]*\n\{\n([\s\S]*?)\n\}/gm)) {
    const fields = new Map<string, string>();
    for (const f of m[2]!.matchAll(/^\t(?:ref )?([\w<> ,]+?) (\w+)(?: = [^;]+)?;/gm)) fields.set(f[2]!, f[1]!);
    out.set(m[1]!, fields);
  }
  return out;
}

/** Every object key in a JSON value, except the names inside `traits` (a map, not fields). */
function keys(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keys(v, into));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      if (k !== 'traits') keys(v, into);
    }
  }
  return into;
}

test('dayz module: every source file has balanced braces, brackets and parentheses', () => {
  for (const file of files) {
    const text = code(source(file));
    for (const [open, close] of [
      ['{', '}'],
      ['(', ')'],
      ['[', ']'],
    ] as const) {
      let depth = 0;
      for (const c of text) {
        if (c === open) depth++;
        if (c === close) depth--;
        assert.ok(depth >= 0, `${file}: ${close} before its ${open}`);
      }
      assert.equal(depth, 0, `${file}: unbalanced ${open}${close}`);
    }
  }
});

test('dayz module: the batch builder writes every key of the fixture ticks', () => {
  const builder = source('BrainstemTick.c') + source('BrainstemJson.c');
  for (const key of keys(ticksFixture().ticks)) {
    assert.ok(builder.includes(`\\"${key}\\":`), `BrainstemTick.c never writes "${key}"`);
  }
});

test('dayz module: the reply classes declare every field of the expected intents, typed', () => {
  const classes = classFields(source('BrainstemReply.c'));
  const intent = classes.get('BrainIntent')!;
  const vec = classes.get('BrainVec')!;
  const reply = classes.get('BrainReply')!;
  const error = classes.get('BrainReplyError')!;
  assert.ok(intent && vec && reply && error, 'BrainIntent, BrainVec, BrainReply and BrainReplyError are declared');
  const typeOf = (v: unknown): string => {
    if (typeof v === 'boolean') return 'bool';
    if (typeof v === 'string') return 'string';
    if (typeof v === 'number') return Number.isInteger(v) ? 'int|float' : 'float';
    return 'BrainVec';
  };
  const expected = repliesFixture().expected as Record<string, unknown>[];
  for (const r of expected) {
    if ('error' in r) {
      for (const f of Object.keys(r.error as object)) assert.equal(error.get(f), 'string', `BrainReplyError.${f}`);
      continue;
    }
    assert.equal(reply.get('agent'), 'int');
    assert.equal(reply.get('posture'), 'string');
    assert.equal(reply.get('intents'), 'array<ref BrainIntent>');
    for (const i of r.intents as Record<string, unknown>[]) {
      for (const [field, value] of Object.entries(i)) {
        const declared = intent.get(field);
        assert.ok(declared, `BrainIntent has no field ${field} (${String(i.kind)})`);
        assert.ok(typeOf(value).split('|').includes(declared), `BrainIntent.${field} is ${declared}, the fixture has ${JSON.stringify(value)}`);
        if (declared === 'BrainVec') for (const axis of ['x', 'y', 'z']) assert.equal(vec.get(axis), 'float');
      }
    }
  }
  // Ids are whole numbers on the wire: an int field, never a float that would round them.
  for (const f of ['target', 'from']) assert.equal(intent.get(f), 'int');
  assert.equal(reply.get('error'), 'BrainReplyError');
});

test('dayz module: strings are escaped as JSON requires and the limits match the other clients', () => {
  const json = source('BrainstemJson.c');
  for (const handled of ['c == "\\""', 'c == "\\\\"', 'code == 10', 'code == 13', 'code == 9', 'code < 32', '"\\\\u00"']) {
    assert.ok(json.includes(handled), `Quote does not handle ${handled}`);
  }
  const client = source('BrainstemClient.c');
  assert.match(client, /static const int MAX_BATCH = 1024;/);
  assert.match(client, /"ticks\?token=" \+ BrainstemJson\.UrlEncode\(token\)/);
  assert.match(client, /SetHeader\("application\/json"\)/);
});
