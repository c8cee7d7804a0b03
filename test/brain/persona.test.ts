import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, DEFAULT_BUNDLE, TRAIT_NAMES } from '../../brain/index.js';
import { bundle, hostile, req, self } from './sim.js';

test('flavor: themes_per_bot distinct themes by weight from the seed, plus flavor.global', () => {
  const brain = new Brain(bundle());
  const counts = new Map<string, number>();
  for (let agent = 1; agent <= 2000; agent++) {
    brain.tick(req(agent, 0, self()));
    const p = brain.persona(agent)!;
    assert.equal(p.themes.length, 2);
    assert.notEqual(p.themes[0], p.themes[1]);
    assert.equal(p.global, DEFAULT_BUNDLE.flavor.global);
    for (const t of p.themes) counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  // Weight 3 beats weight 1 clearly.
  assert.ok(counts.get('misses their family')! > 1.5 * counts.get('collects old maps')!, JSON.stringify([...counts]));
  // Same seed, same agent, another brain: same themes.
  const again = new Brain(bundle());
  again.tick(req(17, 500, self()));
  assert.deepEqual(again.persona(17)!.themes, brain.persona(17)!.themes);
});

test('population: traits sampled within mean ± spread unless the profile gives them', () => {
  const brain = new Brain(bundle());
  for (let agent = 1; agent <= 300; agent++) {
    brain.tick(req(agent, 0, self(), {}, agent === 1 ? { traits: { openness: 0.99, neuroticism: 0.01 }, name: 'Mira' } : {}));
    const p = brain.persona(agent)!;
    for (const name of TRAIT_NAMES) {
      const { mean, spread } = DEFAULT_BUNDLE.population[name];
      if (agent === 1 && (name === 'openness' || name === 'neuroticism')) continue;
      assert.ok(p.traits[name] >= mean - spread - 1e-9 && p.traits[name] <= mean + spread + 1e-9, `${name} ${p.traits[name]}`);
    }
  }
  const mira = brain.persona(1)!;
  assert.equal(mira.name, 'Mira');
  assert.equal(mira.traits.openness, 0.99);
  assert.equal(mira.traits.neuroticism, 0.01);
  assert.equal(brain.persona(999), null);
});

test('roster: name, alignment from role and behaviour, goal and state per agent, by id', () => {
  const brain = new Brain(bundle({ human_factors: false }));
  brain.tick(req(3, 0, self(), {}, { role: 'bandit', name: 'Rook' }));
  brain.tick(req(1, 0, self(), {}, { role: 'guard' }));
  brain.tick(req(2, 0, self(), { targets: [hostile(9, { x: 30, y: 8, z: 0 })] }, { role: 'survivor' }));
  brain.tick(req(4, 0, self(), {}, { role: 'trader' }));
  brain.tick(req(5, 0, self(), { targets: [hostile(9, { x: 30, y: 8, z: 0 }, { kind: 'zombie' })] }));
  const rows = brain.roster();
  assert.deepEqual(
    rows.map((r) => r.agent),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(
    rows.map((r) => r.alignment),
    ['friendly', 'hostile', 'hostile', 'friendly', 'neutral'],
  );
  assert.deepEqual(rows.map((r) => r.state).slice(1, 2), ['engaging']);
  assert.equal(rows[2]!.name, 'Rook');
  for (const r of rows) assert.deepEqual(Object.keys(r).sort(), ['agent', 'alignment', 'goal', 'name', 'state']);
});
