import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode } from '@msgpack/msgpack';
import type { TickResponse, Why } from '../../../brain/index.js';
import { explainOf } from '../../../src/sidecar/tick/explain.js';
import { fullTick, postTo, startTest, type Answer, type Enc } from '../helpers.js';

// `?explain=1` on /tick and /ticks: each reply then carries `why`; nothing else changes.

function bodyOf(a: Answer, enc: Enc): unknown {
  assert.equal(a.status, 200, a.bytes.toString());
  return enc === 'json' ? a.json() : decode(a.bytes);
}

function checkWhy(why: Why | undefined): void {
  assert.ok(why, 'no why');
  assert.deepEqual(Object.keys(why), ['mode', 'goal', 'options', 'rule']);
  assert.equal(typeof why.mode, 'string');
  assert.equal(typeof why.goal, 'string');
  assert.ok(Array.isArray(why.options) && why.options.length <= 3);
  for (const o of why.options) {
    assert.deepEqual(Object.keys(o), ['name', 'score']);
    assert.equal(typeof o.name, 'string');
    assert.equal(typeof o.score, 'number');
  }
  assert.ok(why.rule.length > 0);
}

/** A few ticks of three characters, one of them facing a hostile. */
function traffic(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let t = 0; t < 6; t++) {
    for (const agent of [11, 12, 13]) {
      const tick = fullTick(agent) as { snapshot: Record<string, unknown> & { targets: unknown[] } };
      tick.snapshot.time_s = 100 + t * 0.5;
      if (agent !== 11) tick.snapshot.targets = [];
      if (agent === 13) delete tick.snapshot.squad;
      out.push(tick);
    }
  }
  return out;
}

for (const workers of [0, 1]) {
  const mode = workers === 0 ? 'inline' : 'with a worker';
  test(`?explain=1 adds why to every reply of /tick and /ticks and changes nothing else, ${mode}, JSON and MessagePack`, async () => {
    const plain = await startTest({ workers, stateFile: null });
    const explained = await startTest({ workers, stateFile: null });
    try {
      for (const enc of ['json', 'msgpack'] as const) {
        // Fresh agents per encoding: both sidecars see the same sequence.
        const shift = enc === 'json' ? 0 : 100;
        const ticks = traffic().map((t) => {
          const s = (t as { snapshot: { agent: number } }).snapshot;
          s.agent += shift;
          return t;
        });
        for (const tick of ticks.slice(0, 9)) {
          const off = bodyOf(await postTo(`${plain.url}/tick`, tick, enc), enc) as TickResponse;
          const on = bodyOf(await postTo(`${explained.url}/tick?explain=1`, tick, enc), enc) as TickResponse;
          assert.equal('why' in off, false);
          checkWhy(on.why);
          const { why: _why, ...rest } = on;
          assert.deepEqual(rest, off);
        }
        const batch = ticks.slice(9);
        const offs = bodyOf(await postTo(`${plain.url}/ticks`, batch, enc), enc) as TickResponse[];
        const ons = bodyOf(await postTo(`${explained.url}/ticks?explain=1`, batch, enc), enc) as TickResponse[];
        assert.equal(ons.length, batch.length);
        for (let k = 0; k < ons.length; k++) {
          assert.equal('why' in offs[k]!, false);
          checkWhy(ons[k]!.why);
          const { why: _why, ...rest } = ons[k]!;
          assert.deepEqual(rest, offs[k]);
        }
        // The facing character weighed its fight: engage and flee, with their scores.
        const facing = ons.find((r) => r.agent === 11 + shift)!;
        assert.deepEqual(facing.why!.options.map((o) => o.name).sort(), ['engage', 'flee']);
        // A refused element keeps its error and gets no why; the others still explain. (Sent to
        // both sidecars: the character joins a squad, whose members must see the same on both.)
        const mixedBatch = [fullTick(50 + shift), { snapshot: {} }];
        const mixedOff = bodyOf(await postTo(`${plain.url}/ticks`, mixedBatch, enc), enc) as Record<string, unknown>[];
        const mixed = bodyOf(await postTo(`${explained.url}/ticks?explain=1`, mixedBatch, enc), enc) as Record<string, unknown>[];
        checkWhy(mixed[0]!.why as Why);
        assert.ok(mixed[1]!.error);
        assert.equal('why' in mixed[1]!, false);
        assert.deepEqual(mixed[1], mixedOff[1]);
      }
    } finally {
      await plain.close();
      await explained.close();
    }
  });
}

test('?explain=1 goes with ?errors=body and ?token=: failures are still 200 error bodies, replies explain themselves', async () => {
  const token = 'bst_explain-test';
  const s = await startTest({ token, stateFile: null });
  try {
    for (const enc of ['json', 'msgpack'] as const) {
      const refused = bodyOf(await postTo(`${s.url}/tick?explain=1&errors=body`, fullTick(), enc), enc) as { error: { code: string } };
      assert.equal(refused.error.code, 'unauthorized');
      const bad = bodyOf(await postTo(`${s.url}/tick?errors=body&explain=1&token=${token}`, { snapshot: {} }, enc), enc) as { error: { code: string } };
      assert.equal(bad.error.code, 'bad_request');
      const good = bodyOf(await postTo(`${s.url}/tick?errors=body&explain=1&token=${token}`, fullTick(), enc), enc) as TickResponse;
      checkWhy(good.why);
      const many = bodyOf(await postTo(`${s.url}/ticks?token=${token}&explain=1&errors=body`, [fullTick(2), fullTick(3)], enc), enc) as TickResponse[];
      for (const r of many) checkWhy(r.why);
      // Without the token the parameter changes nothing of the refusal.
      assert.equal((await postTo(`${s.url}/tick?explain=1`, fullTick(), enc)).status, 401);
    }
  } finally {
    await s.close();
  }
});

test('only explain=1 turns it on (percent-encoded too); any other value is ignored, as errors= does', async () => {
  const s = await startTest({ stateFile: null });
  try {
    let agent = 200;
    for (const query of ['explain=2', 'explain=yes', 'explain=true', 'explain=', 'explain', 'xexplain=1', 'explain=1x', 'Explain=1', 'explain=0']) {
      for (const route of ['/tick', '/ticks']) {
        const tick = fullTick(agent++);
        const res = bodyOf(await postTo(`${s.url}${route}?${query}`, route === '/tick' ? tick : [tick], 'json'), 'json') as TickResponse | TickResponse[];
        const reply = Array.isArray(res) ? res[0]! : res;
        assert.equal(reply.agent, agent - 1, query);
        assert.equal('why' in reply, false, `${route}?${query}`);
      }
    }
    for (const query of ['explain=%31', 'a=b&explain=1', 'explain=1&explain=2']) {
      const reply = bodyOf(await postTo(`${s.url}/tick?${query}`, fullTick(agent++), 'json'), 'json') as TickResponse;
      checkWhy(reply.why);
    }
    assert.equal(s.status().ticks.ok, 2 * 9 + 3);
  } finally {
    await s.close();
  }
});

test('explainOf reads the query as errorsInBodyOf does', () => {
  assert.equal(explainOf(undefined), false);
  assert.equal(explainOf(''), false);
  assert.equal(explainOf('errors=body'), false);
  assert.equal(explainOf('explain=1'), true);
  assert.equal(explainOf('token=a%26explain%3D1'), false);
  assert.equal(explainOf('explain=%31&errors=body'), true);
});
