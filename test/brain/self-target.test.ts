import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, type Target, type TickRequest } from '../../brain/index.js';
import { workload } from '../../bench/brain-micro.js';
import { allOff, bundle, find, hostile, kinds, req, self } from './sim.js';

// A mod whose perception lists every registered character in range lists the character
// itself too (kind `ai`, its own agent id, at its own position). It is not a target: a
// character does not aim at, flee from, remember or hear itself. A target of that id and
// another kind is someone else (a game whose player ids and character ids overlap) and counts.

function me(agent: number, r: TickRequest, over: Partial<Target> = {}): Target {
  return { id: agent, kind: 'ai', pos: { ...r.snapshot.self_state.pos }, hostile: true, visible: true, name: 'Me', ...over };
}

/** The same traffic with the character itself among its targets, at a place that varies. */
function withSelf(traffic: TickRequest[]): TickRequest[] {
  return traffic.map((r, i) => {
    const agent = r.snapshot.agent as number;
    const targets = [...r.snapshot.targets];
    targets.splice(i % (targets.length + 1), 0, me(agent, r, { hostile: i % 3 !== 0 }));
    const heard = i % 7 === 0 ? [{ from: agent, text: 'my own line, fed back through chat', at_s: r.snapshot.time_s }] : undefined;
    return { ...r, snapshot: { ...r.snapshot, targets, ...(heard !== undefined ? { heard: [...(r.snapshot.heard ?? []), ...heard] } : {}) } };
  });
}

for (const [label, b] of [
  ['reactive only', allOff()],
  ['all on', bundle()],
] as const) {
  test(`the character itself among its targets changes nothing: every reply, persona and export as without it (${label})`, () => {
    const traffic = workload(40, 80);
    const plain = new Brain(b);
    const listed = new Brain(b);
    const mirrored = withSelf(traffic);
    for (let i = 0; i < traffic.length; i++) {
      const a = traffic[i]!;
      const want = plain.tick(a);
      const before = JSON.stringify(mirrored[i]);
      assert.deepEqual(listed.tick(mirrored[i]!), want, `tick ${i} (agent ${a.snapshot.agent})`);
      assert.equal(JSON.stringify(mirrored[i]), before, 'the request is left as it came');
    }
    for (let agent = 1; agent <= 40; agent++) assert.deepEqual(listed.persona(agent), plain.persona(agent));
    assert.deepEqual(listed.exportState(), plain.exportState());
  });

  test(`a hostile of another kind with the character's own id is someone else, and is engaged (${label})`, () => {
    const brain = new Brain(b);
    const r = brain.tick(req(7, 0, self(), { targets: [hostile(7, { x: 20, y: 8, z: 0 })] }));
    assert.deepEqual(kinds(r).slice(0, 2), ['Face', 'Engage']);
    assert.equal(find(r, 'Engage')?.target, 7);
  });

  test(`with only itself in sight, the character is not engaged with anything (${label})`, () => {
    const brain = new Brain(b);
    const r0 = req(7, 0, self());
    const r = brain.tick(req(7, 0, self(), { targets: [me(7, r0)] }));
    assert.equal(find(r, 'Engage'), undefined);
    assert.equal(find(r, 'Flee'), undefined);
    assert.equal(find(r, 'Face'), undefined);
  });
}
