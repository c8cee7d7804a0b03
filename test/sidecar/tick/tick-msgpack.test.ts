import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Decoder, encode } from '@msgpack/msgpack';
import { Brain, DEFAULT_BUNDLE, parseTickRequest, type Intent, type TickRequest, type TickResponse } from '../../../brain/index.js';
import { generateTicks } from '../../../bench/tick/scenarios.js';
import { seededRandom } from '../../../src/random.js';
import { readTickMsgpack, writeTickMsgpack } from '../../../src/sidecar/tick/tick-msgpack.js';

const decoder = new Decoder();

/** What the exact path makes of a body: the request, or null when it answers 400. */
function exact(body: Uint8Array): TickRequest | null {
  let value: unknown;
  try {
    value = decoder.decode(body);
  } catch {
    return null;
  }
  const parsed = parseTickRequest(value);
  return parsed.ok ? parsed.request : null;
}

/** The fast path may decline any body, but whatever it accepts must be exactly what the exact path gives. */
function agrees(body: Uint8Array): TickRequest | null {
  const fast = readTickMsgpack(body);
  if (fast === null) return null;
  const slow = exact(body);
  assert.notEqual(slow, null, `the fast path accepted a body the exact path refuses: ${Buffer.from(body).toString('hex').slice(0, 200)}`);
  assert.deepStrictEqual(fast, slow);
  assert.equal(JSON.stringify(fast), JSON.stringify(slow), 'same fields in the same order');
  return fast;
}

const corpus = generateTicks({ agents: 300, count: 600, seed: 12 });

test('the MessagePack fast path reads every realistic tick, exactly as the decoder and the validator do', () => {
  for (const tick of corpus) assert.notEqual(agrees(encode(tick)), null, 'a well-formed tick takes the fast path');
});

test('MessagePack edge values: number widths, float32, unknown keys of every type, caps, __proto__, trailing bytes', () => {
  const base = corpus[4] as { snapshot: Record<string, unknown>; profile: Record<string, unknown> };
  const withSnapshot = (extra: Record<string, unknown>): Record<string, unknown> => ({ ...base, snapshot: { ...base.snapshot, ...extra } });
  const withProfile = (extra: Record<string, unknown>): Record<string, unknown> => ({ ...base, profile: { ...base.profile, ...extra } });
  const values: unknown[] = [
    withSnapshot({ agent: 200 }),
    withSnapshot({ agent: 70000 }),
    withSnapshot({ agent: 5_000_000_000 }),
    withSnapshot({ agent: -20 }),
    withSnapshot({ agent: -200 }),
    withSnapshot({ agent: -70000 }),
    withSnapshot({ agent: -5_000_000_000 }),
    withSnapshot({ agent: 1.5 }),
    withSnapshot({ agent: null }),
    withSnapshot({ time_s: Infinity }),
    withSnapshot({ time_s: NaN }),
    withSnapshot({ junk: new Uint8Array([1, 2, 3]) }),
    withSnapshot({ junk: new Date(0) }),
    withSnapshot({ junk: { a: [1, 'x', null, true, 2.5, { b: -1 }] } }),
    withSnapshot({ junk: 'é'.repeat(40) }),
    withSnapshot({ junk: 2n ** 60n }),
    withSnapshot({ squad: 'x'.repeat(64) }),
    withSnapshot({ squad: 'x'.repeat(65) }),
    withSnapshot({ squad: 'Équipe 🙂' }),
    withSnapshot({
      targets: Array.from(
        { length: 257 },
        () => (base.snapshot.targets as unknown[])[0] ?? { id: 1, kind: 'ai', pos: { x: 0, y: 0, z: 0 }, hostile: false, visible: true },
      ),
    }),
    withSnapshot({ route: Array.from({ length: 20 }, (_, i) => ({ x: i, y: 0, z: -i })) }),
    withProfile({ role: 'pirate' }),
    withProfile({ name: 'Zoë' }),
    withProfile({ traits: { openness: 0.5, unknown: 3 } }),
    withProfile({ traits: { openness: 1.5 } }),
    { snapshot: base.snapshot },
    { ...base, extra: [1, 2, 3] },
    [],
    'tick',
    {},
  ];
  let accepted = 0;
  for (const value of values) if (agrees(encode(value, { useBigInt64: true })) !== null) accepted++;
  assert.ok(accepted >= 12, `the fast path took ${accepted} of the edge cases`);

  const good = Buffer.from(encode(base));
  assert.equal(agrees(Buffer.concat([good, Buffer.from([0xc0])])), null, 'trailing bytes');
  assert.equal(agrees(good.subarray(0, good.length - 1)), null, 'truncated');
  const float32 = Buffer.from(encode(base, { forceFloat32: true }));
  agrees(float32);

  // A __proto__ key and a number key, written by hand (the encoder will not emit them from an object).
  const protoKey = Buffer.concat([
    Buffer.from([0x83]),
    Buffer.from(encode('snapshot')),
    Buffer.from(encode(base.snapshot)),
    Buffer.from(encode('__proto__')),
    Buffer.from([0x80]),
    Buffer.from(encode('profile')),
    Buffer.from(encode(base.profile)),
  ]);
  assert.equal(agrees(protoKey), null);
  const numberKey = Buffer.concat([
    Buffer.from([0x83]),
    Buffer.from(encode('snapshot')),
    Buffer.from(encode(base.snapshot)),
    Buffer.from([0x07, 0xc0]),
    Buffer.from(encode('profile')),
    Buffer.from(encode(base.profile)),
  ]);
  agrees(numberKey);
  const badUtf8 = Buffer.concat([
    Buffer.from([0x82]),
    Buffer.from(encode('snapshot')),
    Buffer.from(encode(base.snapshot)),
    Buffer.from(encode('profile')),
    Buffer.from([0x81]),
    Buffer.from(encode('name')),
    Buffer.from([0xa3, 0x61, 0xff, 0x62]),
  ]);
  assert.equal(readTickMsgpack(badUtf8), null, 'invalid UTF-8 is the decoder’s to judge');
});

test('thousands of mutated MessagePack bodies: whatever the fast path accepts, the exact path accepts identically', () => {
  const rand = seededRandom(2027);
  const pick = (n: number): number => Math.floor(rand() * n);
  let accepted = 0;
  for (let round = 0; round < 6000; round++) {
    let out = Buffer.from(encode(corpus[pick(corpus.length)]));
    const edits = 1 + pick(3);
    for (let e = 0; e < edits; e++) {
      const at = pick(out.length);
      const op = pick(3);
      const byte = pick(256);
      if (op === 0) out[at] = byte;
      else if (op === 1) out = Buffer.concat([out.subarray(0, at), Buffer.from([byte]), out.subarray(at)]);
      else out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1)]);
    }
    if (agrees(out) !== null) accepted++;
  }
  assert.ok(accepted > 100, `some mutations stay valid (${accepted})`);
});

test("the MessagePack reply writer gives @msgpack/msgpack's bytes, or leaves the reply to it", () => {
  const brain = new Brain(DEFAULT_BUNDLE);
  for (const [k, tick] of corpus.entries()) {
    // Every other reply explained (`?explain=1`): its `why` is written by shape too.
    const response = brain.tick(readTickMsgpack(encode(tick))!, k % 2 === 0);
    assert.equal(response.why !== undefined, k % 2 === 0);
    const written = writeTickMsgpack(response);
    assert.notEqual(written, null, 'a brain reply is written by shape');
    assert.deepStrictEqual(Buffer.from(written!), Buffer.from(encode(response)));
  }
  const explained: TickResponse = {
    agent: 3,
    posture: 'standing',
    intents: [],
    why: {
      mode: 'fleeing',
      goal: 'none',
      options: [
        { name: 'flee', score: 1.25 },
        { name: 'engage', score: -0.125 },
        { name: 'x', score: 3 },
      ],
      rule: 'flee + combat_emote',
    },
  };
  assert.deepStrictEqual(Buffer.from(writeTickMsgpack(explained)!), Buffer.from(encode(explained)));
  assert.deepStrictEqual(
    Buffer.from(writeTickMsgpack({ ...explained, why: { ...explained.why!, options: [] } })!),
    Buffer.from(encode({ ...explained, why: { ...explained.why!, options: [] } })),
  );
  const odd: Intent[] = [
    { kind: 'Face', yaw_deg: -0 },
    { kind: 'Face', yaw_deg: NaN },
    { kind: 'Face', yaw_deg: 0.1 + 0.2 },
    ...[0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31)].map((target): Intent => ({
      kind: 'Engage',
      target,
      fire: target > 0,
    })),
    { kind: 'MoveTo', to: { x: 1e-7, y: -Infinity, z: 12 }, speed: 'sprint' },
    { kind: 'Investigate', at: { x: 1, y: 2, z: 3 } },
    { kind: 'Flee', from: 9 },
    { kind: 'Idle', reason: 'r'.repeat(40) },
    { kind: 'Idle', reason: 'r'.repeat(300) },
    { kind: 'Emote', name: 'wave' },
    { kind: 'Logoff' },
    { kind: 'Say', text: 'got any "water"?', channel: 'proximity', line_id: 'l-1' },
    { kind: 'Say', text: 'over here', channel: 'radio', line_id: 'l-2', audio_url: '/audio/l-2.wav' },
  ];
  const response: TickResponse = { agent: 42, posture: 'crouched', intents: odd };
  assert.deepStrictEqual(Buffer.from(writeTickMsgpack(response)!), Buffer.from(encode(response)));
  const many: TickResponse = { agent: 7, posture: 'standing', intents: Array.from({ length: 20 }, (): Intent => ({ kind: 'Logoff' })) };
  assert.deepStrictEqual(Buffer.from(writeTickMsgpack(many)!), Buffer.from(encode(many)));
  const generic: TickResponse[] = [
    { agent: 2 ** 40, posture: 'standing', intents: [] },
    { agent: 1, posture: 'standing', intents: [{ kind: 'Say', text: 'hé', channel: 'proximity', line_id: 'l1' }] },
    { agent: 1, posture: 'standing', intents: [{ kind: 'Idle', reason: 'café' }] },
  ];
  for (const r of generic) assert.equal(writeTickMsgpack(r), null);
});

test('MessagePack keys in an order other than the schema’s read the same, whichever order came before', () => {
  const tick = corpus[0] as unknown as TickRequest;
  const orders: Record<string, number>[] = [
    { openness: 0.86, neuroticism: 0.61, agreeableness: 0.73 },
    { agreeableness: 0.73, openness: 0.86 },
    { fatigue_rate: 0.2, openness: 0.1 },
    {},
  ];
  for (let round = 0; round < 3; round++)
    for (const traits of orders) {
      const { self_state, ...rest } = tick.snapshot;
      const body = encode({ profile: { traits, role: 'guard' }, snapshot: { ...rest, squad: 's', self_state } });
      assert.notEqual(agrees(body), null, JSON.stringify(traits));
    }
});
