import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { SlabPool } from '../../brain/slab.js';
import { bundle, hostile, req, self } from './sim.js';

test('a slab pool hands out zeroed blocks that do not overlap, and reuses given-back ones zeroed', () => {
  const pool = new SlabPool(5, 3, 10);
  const blocks = Array.from({ length: 7 }, () => pool.take());
  blocks.forEach((b, i) => {
    assert.equal(b.length, 5);
    assert.ok(b.every((x) => x === 0));
    b.fill(i + 1);
  });
  blocks.forEach((b, i) =>
    assert.ok(
      b.every((x) => x === i + 1),
      `block ${i} kept its numbers`,
    ),
  );
  pool.give(blocks[4]!);
  const again = pool.take();
  assert.equal(again, blocks[4]);
  assert.ok(again.every((x) => x === 0));
});

test('a slab pool keeps at most maxFree given-back blocks', () => {
  const pool = new SlabPool(2, 4, 3);
  const blocks = Array.from({ length: 5 }, () => pool.take());
  for (const b of blocks) pool.give(b);
  const reused = Array.from({ length: 4 }, () => pool.take());
  assert.equal(reused.filter((b) => blocks.includes(b)).length, 3, 'three reused, the fourth new');
});

test('agents evicted while an export is under way are exported as they were, though their blocks are reused', () => {
  const brain = new Brain(bundle(), { maxAgents: 4 });
  const tickAll = (ids: number[], t: number): void => {
    for (const id of ids) brain.tick(req(id, t, self({ x: id, y: 8, z: 0 }), { targets: [hostile(100 + id, { x: 30, y: 8, z: id })] }));
  };
  for (let t = 0; t <= 10; t += 0.5) tickAll([1, 2, 3, 4], t);
  const before = brain.exportState().agents;
  const batches = brain.exportBatches(1);
  const first = batches.next().value!;
  // Four new agents evict the four old ones; their memory and numbers blocks go to the new ones.
  for (let t = 0; t <= 10; t += 0.5) tickAll([5, 6, 7, 8], t);
  const exported = [...first, ...[...batches].flat()].sort((x, y) => x.id - y.id);
  assert.deepEqual(
    exported.map((a) => a.id),
    [1, 2, 3, 4],
  );
  assert.deepEqual(exported, before);
  assert.ok(
    before.every((a) => a.mem !== null && a.mem.contacts.length > 0),
    'every agent remembered its contact',
  );
});
