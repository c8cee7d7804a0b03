import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GOALS, GOALS_II, runBelievability } from '../../bench/sim/believability.js';

/**
 * Pins the believability goals on a fixed seed, on shortened runs (a tenth of the standard
 * sizes: 10 characters, 2-18 minutes, 60 probes) so the test stays well under a minute. What
 * these short runs cannot show is named in docs/brain.md: emotes per hour (an 18-minute quiet
 * run holds about one emote per character), and in the shortened crowd (two squads for two
 * minutes, about a character-minute outside combat, where one member turning toward a new
 * leader is 1.5 changes a minute) the goal changes and the squad distance; the full runs show
 * those (bench/RESULTS.md). Every figure of the second table (believable behaviour II) is
 * pinned too.
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
  'squad_distance',
];
/** Runs too short, at a tenth of the size, for a goal: not pinned there. */
const TOO_SHORT: Record<string, readonly string[]> = { goal_changes: ['crowd'], squad_distance: ['crowd'] };

test('believability goals hold on the fixed-seed crowd, waves, quiet, ambush-30 and probe runs', async () => {
  const r = await runBelievability(0.1, ['crowd', 'waves', 'quiet', 'ambush-30']);
  const results = [...r.goals, ...r.goals_ii];
  const missed = [...GOALS.filter((g) => PINNED.includes(g.id)), ...GOALS_II]
    .map((g) => {
      const values = results.find((x) => x.id === g.id)!.values;
      const measured = Object.entries(values).filter(([run, v]) => v !== null && !(TOO_SHORT[g.id] ?? []).includes(run)) as [string, number][];
      return measured.length > 0 && measured.every(([, v]) => g.ok(v)) ? null : `${g.label}: ${JSON.stringify(values)} (goal ${g.goal})`;
    })
    .filter((m) => m !== null);
  assert.deepEqual(missed, []);
  // The clones of the issue: thirty-odd characters meeting one hostile no longer answer alike.
  assert.ok(r.probe.distinct_signatures >= 3 && r.probe.modal_share <= 0.7, JSON.stringify(r.probe));
});
