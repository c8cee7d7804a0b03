import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TickRequest } from '../../../brain/index.js';
import { seededRandom } from '../../../src/random.js';
import { ID_TABLE_INITIAL_SLOTS, ID_TABLE_MAX_IDS, ID_TABLE_MAX_LOAD, IdTable, PlayerTracker, RecentIds } from '../../../src/sidecar/state/players.js';

/** What RecentIds stands for: two Sets, the current window's and the previous one's. */
class TwoSets {
  current = new Set<number>();
  previous = new Set<number>();
  add(id: number): void {
    this.current.add(id);
  }
  rotate(): void {
    this.previous = this.current;
    this.current = new Set();
  }
  has(id: number): boolean {
    return this.current.has(id) || this.previous.has(id);
  }
  count(): number {
    return new Set([...this.current, ...this.previous]).size;
  }
}

const SAFE = Number.MAX_SAFE_INTEGER;
const TWO_32 = 2 ** 32;

/** Ids from every part of the schema's range: small, negative, around 2^31 and 2^32, beyond, at ±2^53-1, and -0. */
function idFrom(random: () => number): number {
  const r = random();
  const small = Math.floor(random() * 3000);
  if (r < 0.4) return small;
  if (r < 0.5) return -small;
  if (r < 0.6) return 2 ** 31 - 50 + (small % 100);
  if (r < 0.7) return TWO_32 * (small % 7) + (small % 5);
  if (r < 0.75) return -TWO_32 * (small % 7) - (small % 5);
  if (r < 0.8) return SAFE - (small % 10);
  if (r < 0.85) return -SAFE + (small % 10);
  if (r < 0.9) return -0;
  return Math.floor((random() * 2 - 1) * SAFE);
}

test('RecentIds answers as two rotating Sets over ids from the whole safe-integer range', () => {
  const random = seededRandom(16);
  const ids = new RecentIds();
  const sets = new TwoSets();
  const probes: number[] = [];
  for (let step = 0; step < 60_000; step++) {
    const r = random();
    if (r < 0.0005) {
      ids.rotate();
      sets.rotate();
    } else {
      const id = idFrom(random);
      probes.push(id);
      ids.add(id);
      sets.add(id);
    }
    if (step % 997 === 0) {
      assert.equal(ids.count(), sets.count(), `count at step ${step}`);
      for (let k = 0; k < 200; k++) {
        const id = k % 2 === 0 ? probes[Math.floor(random() * probes.length)]! : idFrom(random);
        assert.equal(ids.has(id), sets.has(id), `has(${id}) at step ${step}`);
      }
    }
  }
  assert.equal(ids.count(), sets.count());
});

test('an id counts in the window it was added in and the next one, then is forgotten', () => {
  const ids = new RecentIds();
  ids.add(7);
  assert.equal(ids.has(7), true);
  ids.rotate();
  assert.equal(ids.has(7), true, 'added in the previous window');
  assert.equal(ids.count(), 1);
  ids.rotate();
  assert.equal(ids.has(7), false, 'not added for two windows');
  assert.equal(ids.count(), 0);
});

test('adding an id of the previous window again keeps it one more window, and counts it once', () => {
  const ids = new RecentIds();
  ids.add(7);
  ids.rotate();
  ids.add(7);
  assert.equal(ids.count(), 1);
  ids.rotate();
  assert.equal(ids.has(7), true);
  ids.rotate();
  assert.equal(ids.has(7), false);
});

test('the tables grow past their first size, and a window after a busy one starts sized for it', () => {
  const ids = new RecentIds();
  const n = ID_TABLE_INITIAL_SLOTS * 40;
  for (let id = 0; id < n; id++) ids.add(id * 3 - n);
  assert.equal(ids.count(), n);
  for (let id = 0; id < n; id++) assert.equal(ids.has(id * 3 - n), true);
  assert.equal(ids.has(1 - n), false);
  ids.rotate();
  assert.equal(ids.count(), n, 'the ended window is kept');
  ids.add(5);
  ids.rotate();
  assert.equal(ids.count(), 1);
  assert.equal(ids.has(5), true);
  assert.equal(ids.has(-n), false);
  ids.rotate();
  ids.rotate();
  assert.equal(ids.count(), 0);
  for (let id = 0; id < 100; id++) ids.add(id);
  assert.equal(ids.count(), 100);
});

test('ids at the edges: 0 and -0 are one id; ids equal in their low or high 32 bits stay apart', () => {
  const ids = new RecentIds();
  ids.add(-0);
  ids.add(0);
  assert.equal(ids.count(), 1);
  assert.equal(ids.has(0), true);
  assert.equal(ids.has(-0), true);
  const edges = [-1, TWO_32 - 1, TWO_32, -TWO_32, TWO_32 + 1, -TWO_32 - 1, 2 ** 31, -(2 ** 31), SAFE, -SAFE, SAFE - 1, 2 ** 52];
  for (const id of edges) ids.add(id);
  // Ids whose low and high halves fold to the same hash all land on one probe chain.
  for (let k = 2; k <= 301; k++) ids.add(k * TWO_32 + k);
  assert.equal(ids.count(), 1 + edges.length + 300);
  for (const id of edges) assert.equal(ids.has(id), true, String(id));
  for (let k = 2; k <= 301; k++) assert.equal(ids.has(k * TWO_32 + k), true);
  assert.equal(ids.has(1), false);
  assert.equal(ids.has(TWO_32 - 2), false);
  assert.equal(ids.has(302 * TWO_32 + 302), false);
});

test('PlayerTracker counts distinct player targets only', () => {
  const players = new PlayerTracker();
  const target = (id: number, kind: string) => ({ id, kind, pos: { x: 0, y: 0, z: 0 }, hostile: false, visible: true });
  const request = (targets: ReturnType<typeof target>[]) => ({ snapshot: { agent: 1, targets } }) as unknown as TickRequest;
  players.observe(request([target(10, 'player'), target(11, 'ai'), target(12, 'zombie'), target(13, 'player')]));
  players.observe(request([target(10, 'player'), target(14, 'animal')]));
  assert.equal(players.count(), 2);
  assert.equal(players.has(11), false);
  players.rotate();
  players.observe(request([target(15, 'player')]));
  assert.equal(players.count(), 3);
  players.rotate();
  assert.equal(players.count(), 1);
});

test('an IdTable keeps every id through its growth, at most ID_TABLE_MAX_LOAD full, and never keeps NaN', () => {
  const table = new IdTable();
  const limit = Math.floor(ID_TABLE_INITIAL_SLOTS * ID_TABLE_MAX_LOAD);
  for (let id = 0; id < limit; id++) table.add(id * 7919);
  assert.equal(table.size, limit, 'full up to the load limit');
  table.add(-1);
  table.add(NaN);
  table.add(-1);
  assert.equal(table.size, limit + 1);
  assert.equal(table.has(NaN), false);
  for (let id = 0; id < limit; id++) assert.equal(table.has(id * 7919), true);
  const seen: number[] = [];
  table.forEach((id) => seen.push(id));
  assert.equal(seen.length, limit + 1);
  assert.equal(new Set(seen).size, limit + 1);
  assert.equal(new IdTable(100_000).size, 0);
});

test('an IdTable keeps at most its cap of ids: a flood of new ids saturates the count, ids already kept still count', () => {
  const table = new IdTable(0, 3000);
  for (let id = 1; id <= 3000; id++) table.add(id);
  for (let id = 3001; id <= 50_000; id++) table.add(id);
  assert.equal(table.size, 3000);
  assert.equal(table.has(3000), true);
  assert.equal(table.has(3001), false);
  table.add(42);
  assert.equal(table.size, 3000);
  // Sized for more ids than the cap, it is sized for the cap.
  assert.equal(new IdTable(10_000_000, 3000).size, 0);
  assert.equal(ID_TABLE_MAX_IDS, 1 << 20);
});
