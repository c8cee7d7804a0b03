import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, encode } from '@msgpack/msgpack';
import { fullTick, postTo, startTest } from '../helpers.js';

/**
 * Issue 29: one bad element of a MessagePack /ticks batch (a `__proto__` key, an array as a
 * map key, a malformed extension) turned into a 400 for the whole batch, where JSON answers
 * per element. Each such element now gets its own error in its place; the others are answered.
 */
const PROTO_KEY = Buffer.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x01]);
const ARRAY_KEY = Buffer.from([0x81, 0x91, 0x01, 0x01]);
// A timestamp extension (type -1) one byte long: no timestamp has that size.
const BAD_EXT = Buffer.from([0xd4, 0xff, 0x00]);

test('issue 29: MessagePack /ticks answers per element like JSON: a __proto__ key, an array as a map key, a bad ext each get their own error', async () => {
  const s = await startTest();
  try {
    const good = (agent: number): Buffer => Buffer.from(encode(fullTick(agent)));
    const body = Buffer.concat([Buffer.from([0x95]), good(1), PROTO_KEY, ARRAY_KEY, BAD_EXT, good(2)]);
    const r = await postTo(`${s.url}/ticks`, body, 'msgpack');
    assert.equal(r.status, 200);
    const out = decode(r.bytes) as Record<string, unknown>[];
    assert.equal(out.length, 5);
    assert.equal(out[0]!.agent, 1);
    assert.ok(Array.isArray(out[0]!.intents));
    for (const k of [1, 2, 3]) {
      const e = out[k] as { error: { code: string; message: string } };
      assert.equal(e.error.code, 'bad_request', `element ${k}`);
      assert.match(e.error.message, new RegExp(`Element ${k} is not valid MessagePack`));
    }
    assert.equal(out[4]!.agent, 2);
    // The same elements alone on /tick are each a 400: an element's answer is the one /tick gives.
    for (const bad of [PROTO_KEY, ARRAY_KEY, BAD_EXT]) assert.equal((await postTo(`${s.url}/tick`, bad, 'msgpack')).status, 400);
  } finally {
    await s.close();
  }
});

test('issue 29: a MessagePack body that is not an array at all (or whose framing is cut) is still a 400 for the request', async () => {
  const s = await startTest();
  try {
    for (const body of [
      Buffer.from(encode({ snapshot: 1 })),
      Buffer.from([0x92, 0x01]),
      Buffer.from([0xc1]),
      Buffer.concat([Buffer.from([0x91]), PROTO_KEY, Buffer.from([0x00])]),
    ]) {
      const r = await postTo(`${s.url}/ticks`, body, 'msgpack');
      assert.equal(r.status, 400, body.toString('hex'));
    }
  } finally {
    await s.close();
  }
});
