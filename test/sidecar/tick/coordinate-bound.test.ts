import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TICK_LIMITS } from '../../../brain/index.js';
import { fullTick, post, startTest, type Enc } from '../helpers.js';

/**
 * Hostile perception: coordinates near the largest double made the brain's squared distances
 * overflow, and the reply carried `"to": {"x": null, …}` (a NaN position) with 200. A
 * coordinate past TICK_LIMITS.maxCoordinate is now 400 naming it, on every reader (JSON fast
 * path, its general path, MessagePack); within the bound every number of a reply is finite.
 */
const M = TICK_LIMITS.maxCoordinate;

function tickAt(self: { x: number; y: number; z: number }, target: { x: number; y: number; z: number }, route?: { x: number; y: number; z: number }[]) {
  const t = fullTick(5) as any;
  t.snapshot.self_state.pos = self;
  t.snapshot.targets[0].pos = target;
  t.snapshot.route = route ?? [self, target];
  t.snapshot.poi[0].pos = target;
  return t;
}

test('a coordinate past the world bound is 400 naming it, in JSON (compact and spaced) and MessagePack', async () => {
  const s = await startTest();
  try {
    for (const enc of ['json', 'msgpack'] as Enc[]) {
      for (const [edit, path] of [
        [(t: any) => (t.snapshot.self_state.pos.x = 1e308), 'snapshot.self_state.pos.x'],
        [(t: any) => (t.snapshot.targets[0].pos.z = -M - 1), 'snapshot.targets[0].pos.z'],
        [(t: any) => (t.snapshot.route[1].y = 1.7976931348623157e308), 'snapshot.route[1].y'],
        [(t: any) => (t.snapshot.poi[0].pos.x = -1e200), 'snapshot.poi[0].pos.x'],
      ] as const) {
        const t = fullTick(5) as any;
        edit(t);
        for (const body of enc === 'json' ? [JSON.stringify(t), JSON.stringify(t, null, 1)] : [t]) {
          const r = await post(s.url, body, enc);
          assert.equal(r.status, 400, `${enc} ${path}`);
          const err = (r.json() as any).error;
          assert.equal(err.code, 'bad_request');
          assert.deepEqual(
            err.details.map((d: { path: string }) => d.path),
            [path],
          );
          assert.match(err.details[0].message, new RegExp(`must be between -${M} and ${M}`));
        }
      }
    }
  } finally {
    await s.close();
  }
});

test('at the bound, every number of every reply is finite (no null positions)', async () => {
  const s = await startTest();
  try {
    const corners = [M, -M, 0, M / 2];
    let n = 0;
    for (const a of corners)
      for (const b of corners)
        for (const c of corners) {
          const r = await post(
            s.url,
            tickAt({ x: a, y: b, z: c }, { x: -a, y: c, z: -b }, [
              { x: a, y: 0, z: -c },
              { x: -a, y: 0, z: c },
            ]),
          );
          assert.equal(r.status, 200);
          const text = r.bytes.toString('utf8');
          assert.doesNotMatch(text, /null|NaN|Infinity/, text);
          n++;
        }
    assert.equal(n, 64);
  } finally {
    await s.close();
  }
});
