import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Brain,
  BrainStateError,
  STATE_VERSION,
  type BrainState,
  type ConfigBundle,
  type Persona,
  type TickRequest,
  type TickResponse,
} from '../../brain/index.js';
import { fieldsAddedAfter } from '../../brain/agent-fields.js';
import { fixtures } from '../helpers/paths.js';
import { bundle, hostile, req, self } from './sim.js';

/**
 * test/fixtures/brain/state-v1.json was written by the brain of main at bc8ca71, which kept
 * memory as arrays of small objects: its exported state after a busy session (every memory
 * ring wrapped for agent 99, player names allowed), the next requests, its replies to them,
 * every persona afterwards and its state after them. The brain that keeps memory in typed
 * blocks must read that file, answer and describe every character exactly as that brain did,
 * and write the same document.
 */
interface Fixture {
  bundle: ConfigBundle;
  state: BrainState;
  requests: TickRequest[];
  replies: TickResponse[];
  personas: Persona[];
  after: BrainState;
}

const fixture = JSON.parse(readFileSync(join(fixtures, 'brain', 'state-v1.json'), 'utf8')) as Fixture;

test('a state file written before memory moved to typed blocks is read, continued and written back identically', () => {
  const brain = new Brain(fixture.bundle);
  brain.importState(structuredClone(fixture.state));
  // Layout 2 adds the believable-behaviour clocks: every layout-1 field is kept as it was.
  const exported = brain.exportState();
  assert.equal(exported.version, STATE_VERSION);
  assert.deepEqual(
    exported.agents.map((a) => Object.fromEntries(Object.keys(fixture.state.agents[0]!).map((k) => [k, (a as unknown as Record<string, unknown>)[k]]))),
    fixture.state.agents,
  );
  // Behaviour has changed since (the conduct layer), so the old replies are not expected: it continues, as the same characters.
  const old = new Brain(fixture.bundle);
  old.importState(structuredClone(fixture.state));
  fixture.requests.forEach((r) => assert.equal(old.tick(structuredClone(r)).agent, r.snapshot.agent));
  for (const expected of fixture.personas) assert.equal(old.persona(expected.agent)?.name, expected.name, `persona ${expected.agent}`);
});

test('a layout-2 state file round-trips exactly', () => {
  const brain = new Brain(fixture.bundle);
  brain.importState(structuredClone(fixture.state));
  fixture.requests.forEach((r) => brain.tick(structuredClone(r)));
  const saved = JSON.parse(JSON.stringify(brain.exportState())) as BrainState;
  const again = new Brain(fixture.bundle);
  again.importState(saved);
  assert.equal(JSON.stringify(again.exportState()), JSON.stringify(saved));
});

test('memory blocks refuse kinds and ring positions the brain never writes, naming the field', () => {
  const brain = new Brain(bundle());
  brain.tick(req(1, 0, self(), { targets: [hostile(7, { x: 40, y: 8, z: 0 })] }));
  brain.tick(req(1, 2, self(), { targets: [hostile(7, { x: 40, y: 8, z: 0 })] }));
  const good = brain.exportState();
  const mem = good.agents[0]!.mem!;
  assert.equal(mem.contacts.length, 1);
  const withMem = (patch: Partial<typeof mem>) => ({ ...good, agents: [{ ...good.agents[0]!, mem: { ...mem, ...patch } }] });
  const cases: Array<[unknown, string]> = [
    [withMem({ contactsNext: 8 }), 'agents[0].mem.contactsNext'],
    [withMem({ eventsNext: -1 }), 'agents[0].mem.eventsNext'],
    [withMem({ heardNext: 1.5 }), 'agents[0].mem.heardNext'],
    [withMem({ contacts: [{ ...mem.contacts[0]!, kind: 'dragon' }] }), 'agents[0].mem.contacts[0].kind'],
    [withMem({ events: [{ kind: 'dancing', t: 0, ref: 0 }] }), 'agents[0].mem.events[0].kind'],
  ];
  for (const [doc, path] of cases) {
    assert.throws(
      () => brain.importState(doc),
      (e: unknown) => e instanceof BrainStateError && e.problems.some((p) => p.path === path),
      path,
    );
  }
  brain.importState(good);
  assert.deepEqual(brain.exportState(), good);
});

/**
 * test/fixtures/brain/state-v3.json was written by the brain before its numeric fields were
 * derived from one table (agent-fields.ts), at main 320072d: its exported state after 6000
 * ticks of twelve characters (every memory ring full, player names allowed), the next ticks,
 * its replies, its state after them and every persona. Reading that file must give back the
 * same document, the same replies, the same state and the same personas: the persisted
 * format and the behaviour did not move.
 */
interface RecordedSession {
  bundle: ConfigBundle;
  state: BrainState;
  requests: TickRequest[];
  replies: TickResponse[];
  after: BrainState;
  personas: (Persona | null)[];
}

function recorded(name: string): RecordedSession {
  return JSON.parse(readFileSync(join(fixtures, 'brain', name), 'utf8')) as RecordedSession;
}

/** A document as an older layout wrote it: without the fields added after that layout. */
function asLayout(state: BrainState, layout: number): unknown {
  const added = Object.keys(fieldsAddedAfter(layout));
  return { ...state, version: layout, agents: state.agents.map((a) => Object.fromEntries(Object.entries(a).filter(([k]) => !added.includes(k)))) };
}

test("a layout-3 state file is read and written back identically, gaining only the later layouts' fields, and goes on as the same characters", () => {
  const v3 = recorded('state-v3.json');
  assert.equal(v3.state.version, 3);
  const brain = new Brain(v3.bundle);
  brain.importState(structuredClone(v3.state));
  const loaded = brain.exportState();
  assert.equal(loaded.version, STATE_VERSION);
  assert.deepEqual(fieldsAddedAfter(3), { strayT: -1e9, cowardFlag: 0 });
  for (const a of loaded.agents) assert.equal(a.strayT, -1e9);
  assert.equal(JSON.stringify(asLayout(loaded, 3)), JSON.stringify(v3.state));
  // Behaviour has changed since (believable behaviour II: flights through the widest opening, hiding when
  // cornered), so the old replies are not expected: the same characters go on.
  const replies = v3.requests.map((r) => brain.tick(r));
  assert.deepEqual(
    replies.map((r) => r.agent),
    v3.replies.map((r) => r.agent),
  );
  assert.deepEqual(
    v3.after.agents.map((a) => brain.persona(a.id)?.name),
    v3.personas.map((p) => p?.name),
  );
});

/**
 * test/fixtures/brain/state-v4.json: the layout-3 session above as the layout-4 brain exported,
 * continued and described it. The layout-5 brain reads it back with only the kept coward flag
 * added (not flagged), and answers, continues and describes every character exactly as the
 * layout-4 brain did: its ticks never give `profile.coward`, and the flag is all layout 5 adds.
 */
test('a layout-4 state file gains only the coward flag, and its session goes on exactly as the layout-4 brain recorded it', () => {
  const v4 = recorded('state-v4.json');
  assert.equal(v4.state.version, 4);
  assert.deepEqual(fieldsAddedAfter(4), { cowardFlag: 0 });
  const brain = new Brain(v4.bundle);
  brain.importState(structuredClone(v4.state));
  const loaded = brain.exportState();
  assert.equal(loaded.version, STATE_VERSION);
  for (const a of loaded.agents) assert.equal(a.cowardFlag, 0);
  assert.equal(JSON.stringify(asLayout(loaded, 4)), JSON.stringify(v4.state));
  const replies = v4.requests.map((r) => brain.tick(r));
  assert.equal(JSON.stringify(replies), JSON.stringify(v4.replies));
  assert.equal(JSON.stringify(asLayout(brain.exportState(), 4)), JSON.stringify(v4.after));
  assert.equal(JSON.stringify(v4.after.agents.map((a) => brain.persona(a.id) ?? null)), JSON.stringify(v4.personas));
});

/**
 * test/fixtures/brain/state-v5.json: the same session as this brain (layout 5) exports,
 * continues and describes it. Pins the layout-5 format and the behaviour on it.
 */
test('a layout-5 state file is read, continued and written back identically, text for text', () => {
  const v5 = recorded('state-v5.json');
  assert.equal(v5.state.version, 5);
  const brain = new Brain(v5.bundle);
  brain.importState(structuredClone(v5.state));
  assert.equal(JSON.stringify(brain.exportState()), JSON.stringify(v5.state));
  const replies = v5.requests.map((r) => brain.tick(r));
  assert.equal(JSON.stringify(replies), JSON.stringify(v5.replies));
  assert.equal(JSON.stringify(brain.exportState()), JSON.stringify(v5.after));
  assert.equal(JSON.stringify(v5.after.agents.map((a) => brain.persona(a.id) ?? null)), JSON.stringify(v5.personas));
});

test('a layout-2 state file written by the layout-2 brain keeps every field and gains the layout-3 clocks at "nothing under way"', () => {
  const v2 = recorded('state-v2.json');
  assert.equal(v2.state.version, 2);
  const brain = new Brain(v2.bundle);
  brain.importState(structuredClone(v2.state));
  const loaded = brain.exportState();
  assert.equal(loaded.version, STATE_VERSION);
  const added = fieldsAddedAfter(2);
  assert.ok(Object.keys(added).length > 0);
  loaded.agents.forEach((a, i) => {
    const rec = a as unknown as Record<string, unknown>;
    const old = v2.state.agents[i] as unknown as Record<string, unknown>;
    for (const key of Object.keys(old)) assert.deepEqual(rec[key], old[key], key);
    for (const [key, value] of Object.entries(added)) assert.equal(rec[key], value, key);
  });
});

test('a layout-2 state file (before waypoint pauses and detours) loads with those clocks at "nothing under way"', () => {
  const brain = new Brain(fixture.bundle);
  brain.importState(structuredClone(fixture.state));
  fixture.requests.forEach((r) => brain.tick(structuredClone(r)));
  const now = brain.exportState();
  const layout3 = ['pauseUntil', 'pausedT', 'progT', 'progX', 'progZ', 'detourUntil', 'detourX', 'detourZ'];
  const v2 = {
    ...now,
    version: 2,
    agents: now.agents.map((a) => Object.fromEntries(Object.entries(a).filter(([k]) => !layout3.includes(k)))),
  } as unknown as BrainState;
  const again = new Brain(fixture.bundle);
  again.importState(v2);
  const loaded = again.exportState();
  assert.equal(loaded.version, STATE_VERSION);
  for (const a of loaded.agents) {
    const rec = a as unknown as Record<string, number>;
    assert.equal(rec.pauseUntil, -1e9);
    assert.equal(rec.detourUntil, -1e9);
  }
  // Every layout-2 field is kept as it was.
  assert.deepEqual(
    loaded.agents.map((a) => Object.fromEntries(Object.entries(a).filter(([k]) => !layout3.includes(k)))),
    v2.agents,
  );
});
