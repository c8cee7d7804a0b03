import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Brain, BrainStateError, STATE_FORMAT, STATE_VERSION, type TickRequest, type TickResponse } from '../../brain/index.js';
import { bundle, hostile, req, self, World } from './sim.js';

const named = (id: number, name: string) => ({ id, kind: 'player' as const, pos: { x: 10, y: 8, z: 0 }, hostile: false, visible: true, name });

test('memory records contacts, players met and speech heard, counting heard lines once', () => {
  const brain = new Brain(bundle());
  brain.tick(
    req(1, 0, self(), {
      targets: [hostile(7, { x: 40, y: 8, z: 0 }, { kind: 'zombie' }), named(3, 'Alex')],
      heard: [{ from: 3, text: 'hello there', at_s: 0 }],
    }),
  );
  brain.tick(
    req(1, 1, self(), {
      targets: [named(3, 'Alex')],
      heard: [
        { from: 3, text: 'hello there', at_s: 0 },
        { from: 3, text: 'you ok?', at_s: 0.5 },
      ],
    }),
  );
  assert.equal(brain.drainEvents().heard, 2);
  const m = brain.persona(1)!.memory;
  assert.equal(m.contacts, 1);
  assert.deepEqual(m.last_contact, { target: 7, kind: 'zombie', at: { x: 40, y: 8, z: 0 }, t: 0 });
  assert.deepEqual(m.players_met, [{ id: 3, name: null, meetings: 1 }], 'no names unless allowed');
  assert.deepEqual(
    m.heard.map((h) => h.text),
    ['you ok?', 'hello there'],
  );
});

test('player names are kept only when speech.phrase_cache.allow_player_names is on', () => {
  const brain = new Brain(
    bundle({}, (b) => {
      b.speech.phrase_cache.allow_player_names = true;
    }),
  );
  brain.tick(req(1, 0, self(), { targets: [named(3, 'Alex')] }));
  brain.tick(req(1, 100, self(), { targets: [named(3, 'Alex')] }));
  assert.deepEqual(brain.persona(1)!.memory.players_met, [{ id: 3, name: 'Alex', meetings: 2 }]);
});

test('memory is bounded: rings keep the newest entries', () => {
  const brain = new Brain(bundle({ human_factors: false }));
  for (let t = 0; t < 200; t++) {
    brain.tick(
      req(1, t, self(), {
        targets: [hostile(1000 + t, { x: 50, y: 8, z: t }), named(2000 + t, 'x'.repeat(500))],
        heard: [{ from: t, text: 'y'.repeat(10_000), at_s: t }],
      }),
    );
  }
  const m = brain.persona(1)!.memory;
  assert.equal(m.contacts, 8);
  assert.equal(m.players_met.length, 12);
  assert.equal(m.heard.length, 6);
  assert.equal(m.heard[0]!.at_s, 199);
  assert.ok(m.heard.every((h) => h.text.length <= 120));
  assert.ok(m.recent_events.length <= 12);
  assert.equal(m.last_contact!.target, 1198, 'targets are sampled every 2 game seconds');
});

test('export/import round trip: a restored brain answers exactly as the original would', () => {
  const b = bundle();
  const original = new Brain(b);
  const world = new World(5, 9, { squads: true });
  for (let i = 0; i < 80; i++) world.step(original, 2);
  const saved = JSON.parse(JSON.stringify(original.exportState()));
  assert.equal(saved.format, STATE_FORMAT);
  assert.equal(saved.version, STATE_VERSION);
  assert.equal(saved.agents.length, 9);
  const restored = new Brain(b);
  restored.importState(saved);
  assert.equal(restored.agentCount, 9);
  assert.deepEqual(restored.exportState(), original.exportState());
  assert.deepEqual(restored.roster(), original.roster());
  assert.deepEqual(restored.persona(4), original.persona(4));
  // The same next rounds on both: identical replies (squads rebuilt from the saved ids).
  let compared = 0;
  const both = {
    tick(r: TickRequest): TickResponse {
      const expected = original.tick(structuredClone(r));
      assert.deepEqual(restored.tick(r), expected);
      compared++;
      return expected;
    },
  } as Brain;
  for (let i = 0; i < 30; i++) world.step(both, 2);
  assert.equal(compared, 270);
});

test('import refuses invalid documents whole, naming the fields, and keeps the current state', () => {
  const brain = new Brain(bundle());
  brain.tick(req(1, 0, self()));
  const good = brain.exportState();
  const cases: Array<[unknown, string]> = [
    [null, ''],
    [{ ...good, version: STATE_VERSION + 1 }, 'version'],
    [{ ...good, format: 'other' }, 'format'],
    [{ ...good, agents: 'x' }, 'agents'],
    [{ ...good, agents: [{ ...good.agents[0], fear: 2 }] }, 'agents[0].fear'],
    [{ ...good, agents: [{ ...good.agents[0], mode: 'dancing' }] }, 'agents[0].mode'],
    [{ ...good, agents: [{ ...good.agents[0], x: Number.NaN }] }, 'agents[0].x'],
    [{ ...good, agents: [{ ...good.agents[0], extra: 1 }] }, 'agents[0].extra'],
    [{ ...good, agents: [good.agents[0], good.agents[0]] }, 'agents[1].id'],
  ];
  for (const [doc, path] of cases) {
    assert.throws(
      () => brain.importState(doc),
      (e: unknown) => e instanceof BrainStateError && e.code === 'invalid_brain_state' && e.problems.some((p) => p.path === path),
      path,
    );
  }
  assert.equal(brain.agentCount, 1);
});

test('10,000 agents with full memory fit well within 150 MB', () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  // Heap plus array buffers: each agent's numeric block is a Float64Array whose store may live off-heap.
  const used = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const before = used();
  const brain = new Brain(
    bundle({}, (b) => {
      b.speech.phrase_cache.allow_player_names = true;
    }),
    { maxAgents: 10_000 },
  );
  for (let t = 0; t < 14; t++) {
    for (let agent = 1; agent <= 10_000; agent++) {
      brain.tick(
        req(agent, t, self({ x: agent, y: 8, z: 0 }), {
          targets: [hostile(t, { x: agent + 30, y: 8, z: 0 }), named(100 + t, `Player number ${t}`)],
          heard: [{ from: 100 + t, text: `a fairly long line of chat number ${t} `.repeat(5), at_s: t }],
        }),
      );
    }
  }
  gc();
  const mb = (used() - before) / 1e6;
  assert.equal(brain.agentCount, 10_000);
  assert.ok(mb < 75, `${mb.toFixed(1)} MB`);
  console.log(`# 10,000 agents with full memory: ${mb.toFixed(1)} MB of heap and array buffers`);
});
