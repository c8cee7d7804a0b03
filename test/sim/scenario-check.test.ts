import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScenario } from '../../bench/sim/run.js';

test('an invalid scenario is refused with every problem at once: fields, script, expectations and the merged bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bad-scenario-'));
  try {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'bad',
        duration_s: -1,
        tick_hz: 1,
        characters: [{ id: 1, brain: true, pos: { x: 0, y: 0, z: 0 } }],
        bundle: { version: 'x', weights: 5 },
        script: [{ at_s: 'z', do: 'explode' }],
        expect: [{ check: 'nope' }],
      }),
    );
    assert.throws(
      () => loadScenario(file),
      (err: Error) => {
        assert.match(err.message, /invalid \(6 problems\)/);
        for (const part of ['duration_s', 'script[0].at_s', 'script[0].do', 'expect[0].check', 'bundle.weights', 'bundle.version'])
          assert.ok(err.message.includes(part), part);
        return true;
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
