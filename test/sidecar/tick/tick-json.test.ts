import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Brain, DEFAULT_BUNDLE, parseTickRequest, type Intent, type TickRequest, type TickResponse } from '../../../brain/index.js';
import { generateTicks } from '../../../bench/tick/scenarios.js';
import { seededRandom } from '../../../src/random.js';
import { MAX_BATCH_TICKS } from '../../../src/sidecar/tick/tick-array.js';
import { appendTickJson, readTickJson, readTicksJson, rewindTickJson, writeTickJson } from '../../../src/sidecar/tick/tick-json.js';
import { CACHED_TEXT_BYTES, TEXT_CACHE_SLOTS } from '../../../src/sidecar/tick/tick-reader.js';

/** What the exact path makes of a body: the request, or null when it answers 400. */
function exact(body: Buffer): TickRequest | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const parsed = parseTickRequest(value);
  return parsed.ok ? parsed.request : null;
}

/** The fast path may decline any body, but whatever it accepts must be exactly what the exact path gives. */
function agrees(body: Buffer): TickRequest | null {
  const fast = readTickJson(body);
  if (fast === null) return null;
  const slow = exact(body);
  assert.notEqual(slow, null, `the fast path accepted a body the exact path refuses: ${body.toString('utf8').slice(0, 300)}`);
  assert.deepStrictEqual(fast, slow);
  assert.equal(JSON.stringify(fast), JSON.stringify(slow), 'same fields in the same order');
  return fast;
}

const corpus = generateTicks({ agents: 300, count: 600, seed: 11 });

test('the fast path reads every realistic tick, exactly as JSON.parse and the validator do', () => {
  for (const tick of corpus) {
    const body = Buffer.from(JSON.stringify(tick));
    assert.notEqual(agrees(body), null, 'a well-formed tick takes the fast path');
    assert.notEqual(agrees(Buffer.from(JSON.stringify(tick, null, 2))), null, 'whitespace anywhere is fine');
  }
});

test('a body inside a larger buffer, or a plain Uint8Array, reads the same', () => {
  const text = JSON.stringify(corpus[0]);
  const big = Buffer.from(`xxxx${text}yyyy`);
  const view = new Uint8Array(big.buffer, big.byteOffset + 4, Buffer.byteLength(text));
  assert.deepStrictEqual(readTickJson(view), exact(Buffer.from(text)));
});

test('edge values: number forms, escapes, unicode, unknown and duplicate keys', () => {
  const base = JSON.stringify(corpus[3]);
  const cases: string[] = [
    base.replace('"time_s":', '"time_s":1e2,"x_time":'),
    base.replace(/"time_s":[^,]+/, '"time_s":12.5e1'),
    base.replace(/"time_s":[^,]+/, '"time_s":0.1234567890123456789'),
    base.replace(/"time_s":[^,]+/, '"time_s":123456789012345678901234'),
    base.replace(/"time_s":[^,]+/, '"time_s":-0'),
    base.replace(/"time_s":[^,]+/, '"time_s":1E-7'),
    base.replace(/"time_s":[^,]+/, '"time_s":1e400'),
    base.replace(/"time_s":[^,]+/, '"time_s":01'),
    base.replace(/"time_s":[^,]+/, '"time_s":1.'),
    base.replace(/"time_s":[^,]+/, '"time_s":.5'),
    base.replace(/"time_s":[^,]+/, '"time_s":+5'),
    base.replace(/"time_s":[^,]+/, '"time_s":"5"'),
    base.replace(/"time_s":[^,]+/, '"time_s":null'),
    base.replace(/"agent":[^,]+/, '"agent":4.5'),
    base.replace(/"agent":[^,]+/, '"agent":4.0'),
    base.replace(/"agent":[^,]+/, '"agent":9007199254740993'),
    base.replace('"snapshot":{', '"snapshot":{"agent":-3,'),
    base.replace('"snapshot":{', '"snapshot":{"agent":"nope",'),
    base.replace('"snapshot":{', '"snapshot":{"__proto__":{"polluted":true},"constructor":[1,{"a":[true,false,null]}],'),
    base.replace('"snapshot":{', '"snapshot":{"\\u0061gent":77,'),
    base.replace('"snapshot":{', '"snapshot":{"näme":"x",'),
    base.replace('"snapshot":{', '"snapshot":{"junk":"\\x",'),
    base.replace('"snapshot":{', '"snapshot":{"junk":"\\u12G4",'),
    base.replace('"snapshot":{', '"snapshot":{"junk":"tab\there",'),
    base.replace('"snapshot":{', `"snapshot":{"deep":${'['.repeat(40)}${']'.repeat(40)},`),
    base.replace('"snapshot":{', `"snapshot":{"deep":${'['.repeat(20)}1${']'.repeat(20)},`),
    base.replace('"squad":', '"squad":"a\\"b","x":'),
    base.replace('"profile":{', '"profile":{"name":"Zoë 🙂","role":"bandit",'),
    base.replace('"profile":{', '"profile":{"name":"Mi\\u00efra\\n","coward":true,'),
    base.replace('"profile":{', '"profile":{"role":"pirate",'),
    base.replace('"profile":{', '"profile":{"role":"band\\u0069t",'),
    base.replace('"profile":{', '"profile":{"traits":{"openness":0.9,"openness":2},'),
    base.replace('"profile":{', '"profile":{"traits":{"openness":2,"openness":0.9},'),
    base.replace('"profile":{', '"profile":{"traits":{"fatigue_rate":1,"unknown":5,"openness":0},'),
    base.replace(
      '"profile":{',
      '"profile":{"traits":{"fatigue_rate":0.8,"break_proneness":0.7,"afk_proneness":0.6,"neuroticism":0.5,"agreeableness":0.4,"extraversion":0.3,"conscientiousness":0.2,"openness":0.1},',
    ),
    base.replace('"profile":{', '"profile":{"name":"' + 'n'.repeat(64) + '",'),
    base.replace('"profile":{', '"profile":{"name":"' + 'n'.repeat(65) + '",'),
    base.replace('"profile":{', '"profile":{"name":"' + 'é'.repeat(64) + '",'),
    base.replace('"profile":{', '"profile":{"name":"' + '😀'.repeat(33) + '",'),
    base.replace(/"profile":\{[^}]*\}(,"traits":\{[^}]*\})?\}?/, '"profile":null'),
    base.replace(/,"profile":.*\}$/, '}'),
    `${base} `,
    `${base} x`,
    `${base}}`,
    base.slice(0, -1),
    `\ufeff${base}`,
    '{}',
    '[]',
    '{"snapshot":{}}',
    '{"snapshot":{"agent":1,"time_s":0,"self_state":{"pos":{"x":0,"y":0,"z":0},"heading_deg":0,"health":100,"blood":5000,"hunger":0,"thirst":0,"has_weapon":false,"ammo":0},"targets":[]}}',
    '{"snapshot":{"agent":1,"time_s":0,"self_state":{"pos":{"x":0,"y":0,"z":0},"heading_deg":0,"health":100,"blood":5000,"hunger":0,"thirst":0,"has_weapon":false,"ammo":0},"targets":[],"route":[],"poi":[],"heard":[]},"profile":{}}',
    '{"snapshot":{"agent":1,"time_s":0,"self_state":{"pos":{"x":0,"y":0,"z":0},"heading_deg":0,"health":100,"blood":5000,"hunger":0,"thirst":0,"has_weapon":false,"ammo":0},"targets":[],"route":[{"x":1,"y":2}]}}',
    '{"snapshot":{"agent":1,"time_s":0,"self_state":{"pos":{"x":0,"y":0,"z":0},"heading_deg":0,"health":100,"blood":5000,"hunger":0,"thirst":0,"has_weapon":false,"ammo":0},"targets":[],"poi":[{"id":"w1","kind":"water","pos":{"x":1,"y":2,"z":3}}],"heard":[{"from":5,"text":"hi \\"you\\"","at_s":1}]}}',
  ];
  let accepted = 0;
  for (const text of cases) if (agrees(Buffer.from(text)) !== null) accepted++;
  assert.ok(accepted >= 15, `the fast path took ${accepted} of the edge cases`);
});

test('an invalid UTF-8 byte inside a string never slips through the fast path', () => {
  const base = Buffer.from(JSON.stringify(corpus[5]));
  const at = base.indexOf('"profile":{') + '"profile":{'.length;
  for (const bytes of [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98]]) {
    const body = Buffer.concat([base.subarray(0, at), Buffer.from('"name":"a'), Buffer.from(bytes), Buffer.from('b",'), base.subarray(at)]);
    agrees(body);
    const unknown = Buffer.concat([base.subarray(0, at), Buffer.from('"zz":"a'), Buffer.from(bytes), Buffer.from('b",'), base.subarray(at)]);
    agrees(unknown);
  }
});

test('thousands of mutated bodies: whatever the fast path accepts, the exact path accepts identically', () => {
  const rand = seededRandom(2026);
  const pick = (n: number): number => Math.floor(rand() * n);
  const alphabet = Buffer.from('{}[]:,"\\ 0123456789.-+eEtrufalsn\u00e9x');
  let accepted = 0;
  for (let round = 0; round < 6000; round++) {
    const body = Buffer.from(JSON.stringify(corpus[pick(corpus.length)]));
    const edits = 1 + pick(3);
    let out = body;
    for (let e = 0; e < edits; e++) {
      const at = pick(out.length);
      const op = pick(3);
      const byte = alphabet[pick(alphabet.length)]!;
      if (op === 0) out[at] = byte;
      else if (op === 1) out = Buffer.concat([out.subarray(0, at), Buffer.from([byte]), out.subarray(at)]);
      else out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1)]);
    }
    if (agrees(out) !== null) accepted++;
  }
  assert.ok(accepted > 100, `some mutations stay valid (${accepted})`);
});

test('the reply writer gives JSON.stringify byte for byte', () => {
  const brain = new Brain(DEFAULT_BUNDLE);
  let intents = 0;
  for (const tick of corpus) {
    const request = readTickJson(Buffer.from(JSON.stringify(tick)))!;
    const response = brain.tick(request);
    intents += response.intents.length;
    sameBytes(response);
  }
  assert.ok(intents > corpus.length);
  const odd: Intent[] = [
    { kind: 'Say', text: 'he said "run" \\ now\n\u2028 🙂 \ud800', channel: 'proximity', line_id: 'l-1' },
    { kind: 'Say', text: 'x', channel: 'radio', line_id: 'l-2', audio_url: '/audio/a b.wav' },
    { kind: 'Say', text: 'plain words', channel: 'global', line_id: 'l-3', audio_url: undefined },
    { kind: 'Idle', reason: 'caf\u00e9 "break"' },
    { kind: 'Emote', name: 'wave' },
    { kind: 'Face', yaw_deg: -0 },
    { kind: 'Face', yaw_deg: NaN },
    { kind: 'Engage', target: 1e21, fire: false },
    { kind: 'MoveTo', to: { x: 1e-7, y: -Infinity, z: 0.1 + 0.2 }, speed: 'sprint' },
    { kind: 'Investigate', at: { x: 1, y: 2, z: 3 } },
    { kind: 'Flee', from: -7 },
    { kind: 'Logoff' },
  ];
  const response: TickResponse = { agent: 42, posture: 'prone', intents: odd };
  sameBytes(response);
  sameBytes({ agent: 1, posture: 'standing', intents: [] });
  sameBytes({ agent: 2, posture: 'standing', intents: [{ kind: 'Say', text: '\u00e9\u0001🙂'.repeat(12_000), channel: 'global', line_id: 'long' }] });
});

function sameBytes(response: TickResponse): void {
  const written = Buffer.from(writeTickJson(response));
  const expected = Buffer.from(JSON.stringify(response));
  assert.ok(written.equals(expected), `${written.toString('utf8', 0, 200)}\n!==\n${expected.toString('utf8', 0, 200)}`);
}

test('the reply writer prints every kind of number as JSON.stringify does', () => {
  const random = seededRandom(7);
  const values: number[] = [
    0,
    -0,
    1,
    -1,
    0.01,
    -0.01,
    0.1,
    0.5,
    0.99,
    1.005,
    2.675,
    99.99,
    100,
    1e11 + 0.01,
    999_999_999_999.99,
    1e12,
    1e12 + 0.5,
    -1e12 - 0.25,
    1e15 - 1,
    1e15,
    1e15 + 2,
    2 ** 53,
    1e21,
    1e-6,
    1e-7,
    123.456,
    0.1 + 0.2,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    NaN,
    Infinity,
    -Infinity,
  ];
  for (let n = 0; n < 20_000; n++) {
    const scale = 10 ** Math.floor(random() * 14);
    const sign = random() < 0.3 ? -1 : 1;
    values.push((sign * Math.round(random() * scale * 100)) / 100);
    values.push((sign * Math.round(random() * scale * 10)) / 10);
    values.push(sign * Math.floor(random() * scale));
    values.push(sign * random() * scale);
  }
  for (let n = 0; n < values.length; n += 3) {
    sameBytes({
      agent: 1,
      posture: 'standing',
      intents: [{ kind: 'MoveTo', to: { x: values[n]!, y: values[n + 1] ?? 0, z: values[n + 2] ?? 0 }, speed: 'walk' }],
    });
  }
});

test('appended replies stay intact side by side until the rewind, and a full buffer says so', () => {
  rewindTickJson();
  const responses: TickResponse[] = Array.from({ length: 50 }, (_, k) => ({
    agent: k,
    posture: 'standing',
    intents: [
      { kind: 'MoveTo', to: { x: k + 0.25, y: -k, z: 1e-7 * k }, speed: 'walk' },
      { kind: 'Idle', reason: 'caf\u00e9' },
    ],
  }));
  const views = responses.map((r) => appendTickJson(r)!);
  for (let k = 0; k < responses.length; k++) assert.equal(Buffer.from(views[k]!).toString(), JSON.stringify(responses[k]));
  const big: TickResponse = { agent: 1, posture: 'standing', intents: [{ kind: 'Say', text: 'x'.repeat(60_000), channel: 'global', line_id: 'l' }] };
  let appended = 0;
  while (appendTickJson(big) !== null) appended++;
  assert.ok(appended >= 1 && appended < 10, `${appended} long replies fit`);
  for (let k = 0; k < responses.length; k++) assert.equal(Buffer.from(views[k]!).toString(), JSON.stringify(responses[k]));
  rewindTickJson();
  assert.equal(Buffer.from(appendTickJson(responses[7]!)!).toString(), JSON.stringify(responses[7]));
});

test('a key or enum value off by any one byte is not taken for the known one', () => {
  const tick = {
    snapshot: {
      agent: 5,
      time_s: 10,
      squad: 'a',
      self_state: { pos: { x: 1, y: 2, z: 3 }, heading_deg: 4, health: 50, blood: 4000, hunger: 5, thirst: 6, has_weapon: true, ammo: 7 },
      targets: [{ id: 9, kind: 'zombie', pos: { x: 1, y: 2, z: 3 }, hostile: true, visible: true, name: 'Z', health: 20 }],
      poi: [{ id: 'p', kind: 'water', pos: { x: 0, y: 0, z: 0 } }],
      heard: [{ from: 9, text: 'hi', at_s: 9 }],
    },
    profile: {
      name: 'N',
      role: 'survivor',
      coward: false,
      traits: {
        openness: 0.1,
        conscientiousness: 0.2,
        extraversion: 0.3,
        agreeableness: 0.4,
        neuroticism: 0.5,
        afk_proneness: 0.6,
        break_proneness: 0.7,
        fatigue_rate: 0.8,
      },
    },
  };
  const body = Buffer.from(JSON.stringify(tick));
  assert.notEqual(agrees(body), null);
  let changed = 0;
  // Every byte inside every quoted key and string value, flipped to a letter it is not.
  for (let at = 0; at < body.length; at++) {
    const c = body[at]!;
    if (!((c >= 0x61 && c <= 0x7a) || c === 0x5f)) continue;
    const mutated = Buffer.from(body);
    mutated[at] = c === 0x71 ? 0x72 : 0x71;
    agrees(mutated);
    changed++;
  }
  assert.ok(changed > 300, `${changed} bytes changed`);
});

/** A valid tick with the given profile traits and targets, compact, in the order given. */
function tickText(traits: string, targets: string, extra = ''): string {
  return (
    '{"snapshot":{"agent":7,"time_s":600,"self_state":{"pos":{"x":175.57,"y":2.48,"z":14653.61},"heading_deg":214.24,"health":72.08,' +
    `"blood":4259.1,"hunger":96.57,"thirst":80.92,"has_weapon":true,"ammo":57},"targets":[${targets}]${extra}},` +
    `"profile":{"name":"Alex","role":"survivor","coward":false,"traits":{${traits}}}}`
  );
}

const PLAYER = '{"id":101813,"kind":"player","pos":{"x":10493.5,"y":20.86,"z":6101.53},"hostile":true,"visible":true,"name":"Ida","health":25.7}';

test('positions read as one compact template, and any other spelling of them the general way', () => {
  const positions = [
    '{"x":1,"y":2,"z":3}',
    '{"x": 1,"y":2,"z":3}',
    '{"x":1 ,"y":2,"z":3}',
    '{"x":1,"y":2,"z":3 }',
    '{ "x":1,"y":2,"z":3}',
    '{"x":1,"y":2,"z":3,"w":4}',
    '{"x":1,"y":2,"z":3,"x":9}',
    '{"y":2,"x":1,"z":3}',
    '{"x":1e2,"y":-0,"z":-0.0}',
    '{"x":-12.25,"y":0.5,"z":1E-3}',
    '{"x":1,"y":2}',
    '{"x":1,"y":2,"z":"3"}',
    '{"x":01,"y":2,"z":3}',
    '{"x":1,"y":2,"z":3',
    '{"x":1,"y":2,"z":}',
  ];
  let accepted = 0;
  for (const pos of positions) {
    const text = tickText('"openness":0.5', PLAYER.replace('{"x":10493.5,"y":20.86,"z":6101.53}', pos));
    if (agrees(Buffer.from(text)) !== null) accepted++;
  }
  assert.equal(accepted, 10, 'every well-formed position reads on the fast path');
});

test('a body that ends in a number, a sign or a point is the exact path’s to judge', () => {
  const text = tickText('"openness":0.5', PLAYER);
  const end = text.length - '}}}'.length;
  for (const body of [
    text.slice(0, end),
    text.slice(0, end - 1),
    text.slice(0, end - 2),
    `${text.slice(0, end)}e`,
    `${text.slice(0, end)}-`,
    '12',
    '-',
    '1.',
  ]) {
    assert.equal(readTickJson(Buffer.from(body)), null, body.slice(-12));
    assert.equal(readTicksJson(Buffer.from(`[${body}`), MAX_BATCH_TICKS), null, body.slice(-12));
    assert.equal(exact(Buffer.from(body)), null);
  }
  assert.notEqual(agrees(Buffer.from(`${text} \n`)), null, 'whitespace after the close is fine');
});

test('keys in an order other than the schema’s read the same, whichever order came before', () => {
  const orders = [
    '"openness":0.86,"neuroticism":0.61,"agreeableness":0.73',
    '"agreeableness":0.73,"openness":0.86,"neuroticism":0.61',
    '"fatigue_rate":0.2,"openness":0.1',
    '"openness":0.86,"neuroticism":0.61,"agreeableness":0.73',
    '"neuroticism":0.61',
    '',
  ];
  const extras = ['', ',"squad":"s1"', ',"heard":[{"from":1,"text":"hi","at_s":2}],"route":[{"x":1,"y":2,"z":3}]', ',"squad":"s1","poi":[]'];
  for (let round = 0; round < 3; round++)
    for (const traits of orders) for (const extra of extras) assert.notEqual(agrees(Buffer.from(tickText(traits, PLAYER, extra))), null, `${traits} ${extra}`);
});

test('a target keeps its fields in the schema’s order whichever of name and health it has, in whatever order', () => {
  const forms = [
    PLAYER,
    PLAYER.replace(',"name":"Ida","health":25.7', ',"health":25.7,"name":"Ida"'),
    PLAYER.replace(',"name":"Ida"', ''),
    PLAYER.replace(',"health":25.7', ''),
    PLAYER.replace(',"name":"Ida","health":25.7', ''),
  ];
  for (const target of forms) {
    const read = agrees(Buffer.from(tickText('"openness":0.5', `${target},${forms[0]}`)));
    assert.notEqual(read, null, target);
  }
});

test('enum values are matched whole: a prefix, a longer word or an escape is the exact path’s', () => {
  const kinds = ['"ai"', '"zombie"', '"animal"', '"aix"', '"zomb"', '"a"', '""', '"pl\\u0061yer"', '"player "'];
  let accepted = 0;
  for (const kind of kinds) if (agrees(Buffer.from(tickText('', PLAYER.replace('"player"', kind)))) !== null) accepted++;
  assert.equal(accepted, 3);
  for (const bool of ['tru', 'fals', 'truee', 'falsee', 'True', 'false ', ' true'])
    agrees(Buffer.from(tickText('', PLAYER.replace('"hostile":true', `"hostile":${bool}`))));
});

test(`short ASCII strings come from the text cache (up to ${CACHED_TEXT_BYTES} bytes, ${TEXT_CACHE_SLOTS} slots) and read the same when slots are reused`, () => {
  const names = ['', 'a', 'n'.repeat(CACHED_TEXT_BYTES - 1), 'n'.repeat(CACHED_TEXT_BYTES), 'n'.repeat(CACHED_TEXT_BYTES + 1), 'Zoë', 'tab\\t'];
  for (let k = 0; k < 3 * TEXT_CACHE_SLOTS; k++) names.push(`squad_${k}`);
  for (let round = 0; round < 2; round++)
    for (const name of names) {
      const read = agrees(Buffer.from(tickText('', PLAYER.replace('"Ida"', `"${name}"`), `,"squad":"${name}"`)));
      assert.notEqual(read, null, name);
    }
});
