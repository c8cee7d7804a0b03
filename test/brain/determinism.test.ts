import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, type TickRequest, type TickResponse } from '../../brain/index.js';
import { bundle, World } from './sim.js';

/** Records every request and reply of a world run, so it can be replayed elsewhere. */
function record(
  b: ReturnType<typeof bundle>,
  squads: boolean,
  rounds = 200,
): { requests: TickRequest[]; replies: TickResponse[]; events: Record<string, number> } {
  const brain = new Brain(b);
  const world = new World(11, 8, { squads, hostiles: 3 });
  const requests: TickRequest[] = [];
  const replies: TickResponse[] = [];
  const original = brain.tick.bind(brain);
  brain.tick = (r) => {
    requests.push(structuredClone(r));
    const out = original(r);
    replies.push(structuredClone(out));
    return out;
  };
  for (let i = 0; i < rounds; i++) world.step(brain, 1.5);
  return { requests, replies, events: brain.drainEvents() };
}

test('the same bundle, snapshots and seed give identical replies and counters', () => {
  for (const squads of [false, true]) {
    const a = record(bundle(), squads);
    const b = record(bundle(), squads);
    assert.deepEqual(b.replies, a.replies);
    assert.deepEqual(b.events, a.events);
  }
});

test('a different seed gives a different population', () => {
  const a = record(bundle(), false, 50);
  const b = record(
    bundle({}, (x) => {
      x.flavor.seed = 4242;
    }),
    false,
    50,
  );
  assert.notDeepEqual(b.replies, a.replies);
});

test("interleaving other agents does not change an agent's replies (no squads)", () => {
  const { requests, replies } = record(bundle(), false);
  const agent = requests[0]!.snapshot.agent;
  const mine = requests.filter((r) => r.snapshot.agent === agent);
  const expected = replies.filter((r) => r.agent === agent);
  // Alone in a fresh brain.
  const alone = new Brain(bundle());
  assert.deepEqual(
    mine.map((r) => alone.tick(structuredClone(r))),
    expected,
  );
  // Amid other agents in reverse order and strangers that never existed before.
  const crowded = new Brain(bundle());
  const others = requests.filter((r) => r.snapshot.agent !== agent).reverse();
  const got: TickResponse[] = [];
  let j = 0;
  for (const r of mine) {
    for (let k = 0; k < 3 && j < others.length; k++, j++) {
      const o = structuredClone(others[j]!);
      o.snapshot.agent = (o.snapshot.agent + 100) as typeof o.snapshot.agent;
      crowded.tick(o);
    }
    got.push(crowded.tick(structuredClone(r)));
  }
  assert.deepEqual(got, expected);
});

test('squad sharing is deterministic given the same global order', () => {
  const { requests, replies } = record(bundle(), true, 150);
  const brain = new Brain(bundle());
  assert.deepEqual(
    requests.map((r) => brain.tick(structuredClone(r))),
    replies,
  );
});
