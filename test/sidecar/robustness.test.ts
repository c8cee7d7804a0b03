import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '@msgpack/msgpack';
import { fullTick, post, startTest, type Enc } from './helpers.js';

type Case = { name: string; body: string | Uint8Array; enc: Enc };

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function edited(edit: (t: any) => void): any {
  const t = fullTick() as any;
  edit(t);
  return t;
}

/** MessagePack float64 NaN / Infinity spliced in where pos.x goes (JSON cannot carry them). */
function msgpackWithFloat(value: number): Uint8Array {
  return encode(
    edited((t) => (t.snapshot.self_state.pos.x = value)),
    { forceFloat32: false },
  );
}

function handwritten(): Case[] {
  const deepJson = `{"snapshot":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)},"profile":{}}`;
  const deepArray = `{"snapshot":{"agent":1,"targets":${'['.repeat(20000)}${']'.repeat(20000)}}}`;
  // Built by hand: the encoder itself refuses depth beyond 100.
  const deepMsg = Uint8Array.from([0x81, 0xa8, ...Buffer.from('snapshot'), ...new Array(3000).fill(0x91), 0x01]);
  const many = new Array(5000).fill(0);
  const cases: Case[] = [
    { name: 'deeply nested object', body: deepJson, enc: 'json' },
    { name: 'deeply nested arrays in targets', body: deepArray, enc: 'json' },
    { name: 'deeply nested msgpack', body: deepMsg, enc: 'msgpack' },
    { name: 'huge target array within the body limit', body: JSON.stringify(edited((t) => (t.snapshot.targets = many))), enc: 'json' },
    { name: 'huge route', body: JSON.stringify(edited((t) => (t.snapshot.route = many))), enc: 'json' },
    {
      name: 'msgpack array header claiming 2^32 items',
      body: Uint8Array.from([0x81, 0xa8, ...Buffer.from('snapshot'), 0xdd, 0xff, 0xff, 0xff, 0xff]),
      enc: 'msgpack',
    },
    { name: 'NaN via msgpack', body: msgpackWithFloat(NaN), enc: 'msgpack' },
    { name: 'Infinity via msgpack', body: msgpackWithFloat(Infinity), enc: 'msgpack' },
    { name: '1e999 in JSON', body: JSON.stringify(fullTick()).replace('"time_s":812.5', '"time_s":1e999'), enc: 'json' },
    { name: 'string where a number goes', body: JSON.stringify(edited((t) => (t.snapshot.self_state.health = '100'))), enc: 'json' },
    { name: 'negative ammo', body: JSON.stringify(edited((t) => (t.snapshot.self_state.ammo = -1))), enc: 'json' },
    {
      name: 'agent as a 64-bit integer',
      body: encode(
        edited((t) => (t.snapshot.agent = 2n ** 63n - 1n)),
        { useBigInt64: true },
      ),
      enc: 'msgpack',
    },
    { name: 'binary where a string goes', body: encode(edited((t) => (t.profile.name = new Uint8Array([1, 2, 3])))), enc: 'msgpack' },
    { name: 'msgpack extension value', body: Uint8Array.from([0x81, 0xa8, ...Buffer.from('snapshot'), 0xd4, 0x05, 0x00]), enc: 'msgpack' },
    { name: '__proto__ key in msgpack', body: Uint8Array.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x80]), enc: 'msgpack' },
    {
      name: '__proto__ and constructor keys in JSON',
      body: '{"__proto__":{"snapshot":1},"constructor":{"prototype":{"x":1}},"snapshot":{"__proto__":[]}}',
      enc: 'json',
    },
    { name: 'truncated msgpack', body: encode(fullTick()).slice(0, 40), enc: 'msgpack' },
    { name: 'truncated JSON', body: JSON.stringify(fullTick()).slice(0, 100), enc: 'json' },
    { name: 'invalid UTF-8', body: Uint8Array.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), enc: 'json' },
    { name: 'JSON null', body: 'null', enc: 'json' },
    { name: 'JSON array', body: '[1,2,3]', enc: 'json' },
    { name: 'JSON string', body: '"tick"', enc: 'json' },
    { name: 'msgpack nil', body: Uint8Array.from([0xc0]), enc: 'msgpack' },
    { name: 'JSON sent as msgpack', body: JSON.stringify(fullTick()), enc: 'msgpack' },
    { name: 'targets as an object with length', body: JSON.stringify(edited((t) => (t.snapshot.targets = { length: 3 }))), enc: 'json' },
    { name: 'empty profile name object', body: JSON.stringify(edited((t) => (t.profile.name = { toString: 'x' }))), enc: 'json' },
  ];
  return cases;
}

const JUNK: unknown[] = [null, -1, 1e308, -1e308, 0.5, '', 'x'.repeat(600), [], {}, [1, 2], { x: 1 }, true, 2 ** 53, 'NaN', '1'];

/** Seeded mutations of a valid tick: one leaf replaced by junk, or one key removed. */
function fuzzed(count: number): Case[] {
  const rand = mulberry32(99);
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const t = fullTick() as any;
    let node: any = t;
    let key: string | number = 'snapshot';
    for (let depth = 0; depth < 5 && node[key] !== null && typeof node[key] === 'object'; depth++) {
      node = node[key];
      const keys = Object.keys(node);
      key = keys[Math.floor(rand() * keys.length)]!;
    }
    if (rand() < 0.2) delete node[key];
    else node[key] = JUNK[Math.floor(rand() * JUNK.length)];
    const enc: Enc = rand() < 0.5 ? 'json' : 'msgpack';
    cases.push({ name: `fuzz #${i}`, body: enc === 'json' ? JSON.stringify(t) : encode(t), enc });
  }
  return cases;
}

test('hostile and malformed ticks are answered 4xx, and the service stays up', async () => {
  for (const workers of [0, 2]) {
    const s = await startTest({ workers });
    try {
      for (const c of handwritten()) {
        const r = await post(s.url, c.body, c.enc);
        assert.ok(r.status >= 400 && r.status < 500, `${c.name}: got ${r.status} ${r.bytes.toString().slice(0, 200)}`);
        const body = r.json() as { error: { code: string; message: string } };
        assert.equal(typeof body.error.code, 'string', c.name);
      }
      const fuzz = fuzzed(300);
      for (let i = 0; i < fuzz.length; i += 20) {
        const replies = await Promise.all(fuzz.slice(i, i + 20).map((c) => post(s.url, c.body, c.enc)));
        replies.forEach((r, k) => {
          const c = fuzz[i + k]!;
          assert.ok(r.status === 200 || (r.status >= 400 && r.status < 500), `${c.name}: got ${r.status} ${r.bytes.toString().slice(0, 200)}`);
        });
      }
      assert.equal(s.status().ticks.failed, 0);
      const health = await fetch(`${s.url}/health`);
      assert.equal(await health.text(), 'ok');
      assert.equal((await post(s.url, fullTick())).status, 200);
    } finally {
      await s.close();
    }
  }
  assert.equal(({} as any).snapshot, undefined, 'no prototype was polluted');
});
