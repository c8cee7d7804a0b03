/**
 * The DayZ mod is Enforce Script, which only DayZ runs. Its pure parts run here, transliterated
 * (./enforce.ts): the JSON builder writes the shared tick fixture and the perception registry
 * passes the shared perception fixture, as the Lua and C# clients do. The rest is held to the
 * fixtures by reading it: every field of the expected intents is declared with a matching type
 * where JsonSerializer fills it, the mod folder is complete, and no script queries the world per
 * character or takes an id from GetID().
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInContext } from 'node:vm';
import { enforceContext, fromBytes, toBytes } from './enforce.js';
import { clientsDir, PERCEPTION_FIXTURE, repliesFixture, ticksFixture } from './helpers.js';

const MOD = join(clientsDir, 'dayz', 'Brainstem');
const MODULES = ['3_Game', '4_World', '5_Mission'];
/** Every script file, by name (names are unique across the modules). */
const paths = new Map(
  MODULES.flatMap((m) =>
    readdirSync(join(MOD, 'scripts', m, 'Brainstem'))
      .filter((f) => f.endsWith('.c'))
      .map((f) => [f, join(MOD, 'scripts', m, 'Brainstem', f)] as const),
  ),
);
const files = [...paths.keys()];
const source = (name: string) => readFileSync(paths.get(name)!, 'utf8');

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
  assert.match(client, /m_Request = "ticks\?errors=body";/);
  assert.match(client, /"&token=" \+ BrainstemJson\.UrlEncode\(token\)/);
  assert.match(client, /SetHeader\("application\/json"\)/);
});

test('dayz mod: a complete mod folder (mod.cpp, $PBOPREFIX$, config.cpp modules that exist)', () => {
  assert.ok(existsSync(join(clientsDir, 'dayz', 'mod.cpp')));
  assert.equal(readFileSync(join(MOD, '$PBOPREFIX$'), 'utf8').trim(), 'Brainstem');
  const config = readFileSync(join(MOD, 'config.cpp'), 'utf8');
  assert.match(config, /class CfgPatches\s*\{\s*class Brainstem/);
  assert.match(config, /class CfgMods\s*\{\s*class Brainstem/);
  for (const [cls, module] of [
    ['gameScriptModule', '3_Game'],
    ['worldScriptModule', '4_World'],
    ['missionScriptModule', '5_Mission'],
  ] as const) {
    assert.match(config, new RegExp(`class ${cls}\\s*\\{[^}]*files\\[\\] = \\{"Brainstem/scripts/${module}"\\}`), cls);
    assert.ok(readdirSync(join(MOD, 'scripts', module, 'Brainstem')).length > 0, module);
  }
  // World types (PlayerBase, ZombieBase) are not visible from 3_Game.
  for (const f of readdirSync(join(MOD, 'scripts', '3_Game', 'Brainstem'))) {
    assert.doesNotMatch(code(source(f)), /\b(PlayerBase|ZombieBase|AnimalBase|Weapon_Base)\b/, `${f} uses a 4_World type`);
  }
});

test('dayz mod: perception never queries the world per character, and ids never come from GetID()', () => {
  for (const f of files) {
    const text = code(source(f));
    assert.doesNotMatch(text, /GetObjectsAtPosition|GetObjectsAtPosition3D|GetObjectsInCone/, f);
    assert.doesNotMatch(text, /\.GetID\(\)/, f);
  }
});

test('dayz mod: no call is commented out', () => {
  for (const f of files) {
    for (const line of source(f).split('\n')) assert.doesNotMatch(line, /^\s*\/\/\s*[\w.]+\([^)]*\);/, `${f}: ${line}`);
  }
});

test("dayz mod: the registry has the Lua perception module's rules and defaults", () => {
  const registry = source('BrainstemRegistry.c');
  const lua = readFileSync(join(clientsDir, 'lua', 'brainstem_perception.lua'), 'utf8');
  const pairs: [RegExp, RegExp][] = [
    [/static const float RADIUS = ([\d.]+);/, /Perception\.DEFAULT_RADIUS = ([\d.]+)/],
    [/static const int RAYCAST_BUDGET = (\d+);/, /Perception\.DEFAULT_RAYCAST_BUDGET = (\d+)/],
    [/static const float LOS_TTL_S = ([\d.]+);/, /Perception\.DEFAULT_LOS_TTL_S = ([\d.]+)/],
    [/static const int MAX_TARGETS = (\d+);/, /Perception\.MAX_TARGETS = (\d+)/],
  ];
  for (const [dayz, l] of pairs) assert.equal(Number(dayz.exec(registry)?.[1]), Number(l.exec(lua)?.[1]), String(dayz));
  // The budget is spent only on a pair with no fresh answer, and a pair the budget did not
  // reach keeps its last answer: the same three branches as the Lua module's _visible.
  assert.match(registry, /if \(known && now - known\.at < LOS_TTL_S\)\s*return known\.visible;/);
  assert.match(registry, /if \(m_BudgetLeft <= 0\)\s*return known && known\.visible;/);
  assert.match(registry, /m_BudgetLeft--;/);
});

test('dayz mod: the example profile parses and its agent ids are unique', () => {
  const chars = JSON.parse(readFileSync(join(clientsDir, 'dayz', 'profile', 'Brainstem', 'characters.json'), 'utf8')) as { characters: { id: number }[] };
  const ids = chars.characters.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.ok(Number.isInteger(id) && id > 0 && id < 900_000_000, `id ${id} is in the agents' range`);
  JSON.parse(readFileSync(join(clientsDir, 'dayz', 'profile', 'Brainstem', 'settings.json'), 'utf8'));
});

/** Every string of a JSON value as the UTF-8 bytes Enforce holds. */
function bytesIn(value: unknown): unknown {
  if (typeof value === 'string') return toBytes(value);
  if (Array.isArray(value)) return value.map(bytesIn);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bytesIn(v)]));
  return value;
}

/** BrainTick objects filled from the fixture ticks, as an adapter fills them (absent parts at their "absent" values). */
const FILL = `
  (function (json) {
    const v = (p) => [Math.fround(p.x), Math.fround(p.y), Math.fround(p.z)];
    const list = (items, each) => { if (items === undefined) return null; const a = new EArray(); for (const i of items) a.Insert(each(i)); return a; };
    const ticks = new EArray();
    for (const t of JSON.parse(json)) {
      const s = t.snapshot, st = s.self_state, p = t.profile || {}, b = new BrainTick();
      b.agent = s.agent; b.time_s = Math.fround(s.time_s); b.pos = v(st.pos); b.heading_deg = Math.fround(st.heading_deg);
      b.health = Math.fround(st.health); b.blood = Math.fround(st.blood); b.hunger = Math.fround(st.hunger); b.thirst = Math.fround(st.thirst);
      b.has_weapon = st.has_weapon; b.ammo = st.ammo;
      b.targets = list(s.targets, (x) => { const o = new BrainTarget(); o.id = x.id; o.kind = x.kind; o.pos = v(x.pos); o.hostile = x.hostile; o.visible = x.visible;
        if (x.name !== undefined) o.name = x.name; if (x.health !== undefined) o.health = Math.fround(x.health); return o; });
      b.route = list(s.route, v);
      b.poi = list(s.poi, (x) => { const o = new BrainPoi(); o.id = x.id; o.kind = x.kind; o.pos = v(x.pos); return o; });
      b.heard = list(s.heard, (x) => { const o = new BrainHeard(); o.from = x.from; o.text = x.text; o.at_s = Math.fround(x.at_s); return o; });
      if (s.squad !== undefined) b.squad = s.squad;
      if (p.name !== undefined) b.name = p.name;
      if (p.role !== undefined) b.role = p.role;
      if (p.coward !== undefined) b.coward = p.coward ? 1 : 0;
      if (p.traits !== undefined) { b.traits = new EMap(); for (const [k, x] of Object.entries(p.traits)) b.traits.Set(k, Math.fround(x)); }
      ticks.Insert(b);
    }
    return ticks;
  })`;

test('dayz module: its JSON builder, run, writes the fixture batch (same JSON in, same JSON out)', () => {
  const enforce = enforceContext([source('BrainstemJson.c'), source('BrainstemTick.c')]);
  const fill = runInContext(FILL, enforce as object) as (json: string) => unknown;
  const ticks = fill(JSON.stringify(bytesIn(ticksFixture().ticks)));
  const body = fromBytes(enforce.BrainstemBatch.Build(ticks) as string);
  assert.deepEqual(JSON.parse(body), ticksFixture().ticks);
});

test('dayz module: its string escaping, URL encoding and numbers, run, are what JSON and a query need', () => {
  const enforce = enforceContext([source('BrainstemJson.c')]);
  const tricky = 'a "quoted" \\ back\nline\ttab\r\u0001\u001f Grüße 👋';
  assert.equal(JSON.parse(fromBytes(enforce.BrainstemJson.Quote(toBytes(tricky)) as string)), tricky);
  const encoded = enforce.BrainstemJson.UrlEncode(toBytes('a b&c/é~_.-')) as string;
  assert.equal(encoded.toUpperCase(), 'A%20B%26C%2F%C3%A9~_.-');
  assert.equal(decodeURIComponent(encoded), 'a b&c/é~_.-');
  for (const [n, text] of [
    [0, '0'],
    [-0.0004, '0'],
    [812.5, '812.5'],
    [-4400.125, '-4400.125'],
    [0.6, '0.6'],
    [49.9996, '50'],
    [3e9, '2000000000'],
  ] as const) {
    assert.equal(enforce.BrainstemJson.Num(Math.fround(n)), text, String(n));
  }
});

test('dayz registry: its source, run, passes the perception fixture (radius, nearest first, raycast budget, reuse, removal)', () => {
  const registry = readFileSync(paths.get('BrainstemRegistry.c')!, 'utf8');
  // The raycast and the player ids need the game; the fixture says which pairs see each other.
  const enforce = enforceContext([source('BrainstemJson.c'), source('BrainstemTick.c'), registry], ['BrainstemRegistry.Raycast', 'BrainstemIds.ForPlayer']);
  const fixture = JSON.parse(readFileSync(PERCEPTION_FIXTURE, 'utf8')) as {
    options: { radius: number; raycast_budget: number; los_ttl_s: number; max_targets: number };
    steps: {
      op: string;
      id?: number;
      kind?: string;
      pos?: { x: number; y: number; z: number };
      now?: number;
      blocked?: [number, number][];
      gather?: number[];
      expect?: unknown;
      raycasts?: number;
    }[];
  };
  const R = enforce.BrainstemRegistry;
  R.RADIUS = fixture.options.radius;
  R.RAYCAST_BUDGET = fixture.options.raycast_budget;
  R.LOS_TTL_S = fixture.options.los_ttl_s;
  R.MAX_TARGETS = fixture.options.max_targets;
  enforce.PlayerBase = { Cast: () => null };
  const entities = new Map<number, { id: number; pos: number[]; GetPosition(): number[] }>();
  let blocked = new Set<string>();
  R.Raycast = (from: { id: number }, to: { id: number }) => !blocked.has(`${from.id}>${to.id}`);
  const reg = new R();
  const frames: { targets: Record<string, unknown>; raycasts: number }[] = [];
  for (const step of fixture.steps) {
    if (step.op === 'add') {
      const e = { id: step.id!, pos: [step.pos!.x, step.pos!.y, step.pos!.z], GetPosition: () => e.pos };
      entities.set(step.id!, e);
      reg.Add(step.id, step.kind, e);
    } else if (step.op === 'remove') {
      reg.Remove(step.id);
      entities.delete(step.id!);
    } else if (step.op === 'move') {
      entities.get(step.id!)!.pos = [step.pos!.x, step.pos!.y, step.pos!.z];
    } else {
      blocked = new Set(step.blocked!.map(([a, b]) => `${a}>${b}`));
      reg.BeginFrame();
      const before = reg.raycasts as number;
      const targets: Record<string, unknown> = {};
      for (const id of step.gather!) {
        const list = runInContext('new EArray()', enforce as object) as { id: number; kind: string; hostile: boolean; visible: boolean }[];
        reg.Targets(id, entities.get(id), step.now, list);
        targets[String(id)] = [...list].map((t) => ({ id: t.id, kind: t.kind, hostile: t.hostile, visible: t.visible }));
      }
      frames.push({ targets, raycasts: (reg.raycasts as number) - before });
    }
  }
  const expected = fixture.steps.filter((s) => s.op === 'frame');
  assert.equal(frames.length, expected.length);
  expected.forEach((want, i) => {
    assert.deepEqual(frames[i]!.targets, want.expect, `frame ${i}`);
    assert.equal(frames[i]!.raycasts, want.raycasts, `frame ${i} raycasts`);
  });
});
