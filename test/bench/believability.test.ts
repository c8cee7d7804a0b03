import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBelievability } from '../../bench/sim/believability.js';

/**
 * Pins the believability goals met today on a fixed seed, on shortened runs (a tenth of the
 * standard sizes: 10 characters, 2-18 minutes, 60 probes) so the test stays well under a minute.
 * The two goals these short runs cannot show (emotes per hour, squad distance) are named in docs/brain.md.
 */
const PINNED = [
  'signatures',
  'modal_share',
  'bravery',
  'goal_changes',
  'u_turns',
  'flight',
  'back_to_fled',
  'engage_moving',
  'fire_pauses',
  'shooters',
  'alike',
  'investigations',
  'statues',
  'heard',
  'logoffs',
];

test('believability goals hold on the fixed-seed crowd, quiet, ambush-30 and probe runs', async () => {
  const r = await runBelievability(0.1, ['crowd', 'quiet', 'ambush-30']);
  const missed = r.goals.filter((g) => PINNED.includes(g.id) && !g.met).map((g) => `${g.label}: ${JSON.stringify(g.values)} (goal ${g.goal})`);
  assert.deepEqual(missed, []);
  // The clones of the issue: thirty-odd characters meeting one hostile no longer answer alike.
  assert.ok(r.probe.distinct_signatures >= 3 && r.probe.modal_share <= 0.7, JSON.stringify(r.probe));
});
