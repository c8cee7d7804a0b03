import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LIMITS, limitsWith, parseLimits, readLimitsFile } from '../../src/http/limits.js';
import { tempDir } from '../helpers/paths.js';

test('a limits file changes only what it names: a rate as a count (default window) or {limit, windowSeconds}, a quota as a number', () => {
  const limits = parseLimits({ session: 1200, serverKey: { limit: 600, windowSeconds: 30 }, endpointsPerWidget: 50, passwordHashQueue: 0 });
  assert.deepEqual(limits.session, { limit: 1200, windowMs: 60_000 });
  assert.deepEqual(limits.serverKey, { limit: 600, windowMs: 30_000 });
  assert.equal(limits.endpointsPerWidget, 50);
  assert.equal(limits.passwordHashQueue, 0);
  assert.deepEqual(limits.apiKey, DEFAULT_LIMITS.apiKey);
  assert.equal(limits.liveApiKeys, DEFAULT_LIMITS.liveApiKeys);
  assert.deepEqual(parseLimits({}), limitsWith());
});

test('a bad limits file is refused with a message naming the fix', () => {
  const refuses = (value: unknown, pattern: RegExp) =>
    assert.throws(
      () => parseLimits(value),
      (err: Error) => pattern.test(err.message),
    );
  refuses([], /must hold a JSON object of limits/);
  refuses({ sesion: 5 }, /unknown limit "sesion"; did you mean "session"\?/);
  refuses({ bogus: 5 }, /unknown limit "bogus" \(known: loginFailuresPerEmail, /);
  refuses({ session: 0 }, /session must be an integer from 1 to/);
  refuses({ session: 1.5 }, /session must be an integer/);
  refuses({ session: '600' }, /session must be a number or \{"limit": N, "windowSeconds": S\}/);
  refuses({ session: { limit: 5, window: 60 } }, /unknown field "window"/);
  refuses({ session: { limit: 5, windowSeconds: 0 } }, /windowSeconds must be a number from 0.001 to 604800/);
  refuses({ endpointsPerWidget: { limit: 5 } }, /endpointsPerWidget must be an integer/);
  refuses({ telemetryEventKinds: 1001 }, /telemetryEventKinds must be an integer from 1 to 1000/);
  refuses({ passwordHashConcurrency: 0 }, /passwordHashConcurrency must be an integer from 1/);
});

test('readLimitsFile: a missing file or one that is not JSON says so', () => {
  const dir = tempDir();
  try {
    assert.throws(() => readLimitsFile(join(dir.path, 'none.json')), /cannot read the limits file/);
    const bad = join(dir.path, 'bad.json');
    writeFileSync(bad, '{session: 1}');
    assert.throws(() => readLimitsFile(bad), /is not JSON/);
    const good = join(dir.path, 'good.json');
    writeFileSync(good, '{"widgetKey": 5000}');
    assert.equal(readLimitsFile(good).widgetKey.limit, 5000);
    // Saved by Notepad or PowerShell: a leading byte-order mark is skipped, not "not JSON".
    const bom = join(dir.path, 'bom.json');
    writeFileSync(bom, '\uFEFF{"widgetKey": 7000}');
    assert.equal(readLimitsFile(bom).widgetKey.limit, 7000);
  } finally {
    dir.dispose();
  }
});

test("limitsWith never shares the defaults' objects", () => {
  const a = limitsWith();
  a.session.limit = 1;
  assert.equal(DEFAULT_LIMITS.session.limit, 600);
});
