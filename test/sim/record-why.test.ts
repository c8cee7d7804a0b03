import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TickResponse } from '../../brain/index.js';
import type { FrameCharacter } from '../../bench/sim/engine.js';
import { loadScenario, replay, runScenario } from '../../bench/sim/run.js';
import { repoRoot, tempDir } from '../helpers/paths.js';

// The simulator's record always carries every reply's `why`, and so do the frames `sim --html` is built from.

test('a recorded run has a why in every reply, its frames carry each brain character’s last why, and it replays exactly', async () => {
  const tmp = tempDir();
  try {
    const record = join(tmp.path, 'run.jsonl');
    const frames: FrameCharacter[][] = [];
    const result = await runScenario(loadScenario(join(repoRoot, 'bench', 'sim', 'scenarios', 'coward-flees.json')), {
      recordFile: record,
      onFrame: (_t, chars) => frames.push(chars),
    });
    const lines = readFileSync(record, 'utf8').split('\n').filter(Boolean);
    assert.equal(JSON.parse(lines[0]!).explain, true);
    assert.equal(lines.length - 1, result.ticks);
    const rules = new Set<string>();
    for (const line of lines.slice(1)) {
      const reply = JSON.parse(JSON.parse(line).reply) as TickResponse;
      assert.ok(reply.why, line);
      rules.add(reply.why.rule.split(' + ')[0]!);
    }
    assert.ok(rules.has('flee'), [...rules].join(', '));
    const last = frames.at(-1)!;
    for (const c of last) {
      if (c.brain) assert.ok(c.why && typeof c.why.rule === 'string', JSON.stringify(c));
      else assert.equal(c.why, null);
    }
    assert.deepEqual((await replay(record)).mismatches, []);
    // A recording made before replies explained themselves (no `explain` in its header) replays without them.
    const old = join(tmp.path, 'old.jsonl');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    delete header.explain;
    const stripped = lines.slice(1).map((line) => {
      const rec = JSON.parse(line) as { reply: string };
      const { why: _why, ...rest } = JSON.parse(rec.reply) as TickResponse;
      return JSON.stringify({ ...rec, reply: JSON.stringify(rest) });
    });
    writeFileSync(old, `${[JSON.stringify(header), ...stripped].join('\n')}\n`);
    assert.deepEqual((await replay(old)).mismatches, []);
  } finally {
    tmp.dispose();
  }
});
