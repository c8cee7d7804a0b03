import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from '../../src/http/errors.js';
import { parseReport, TELEMETRY_LIMITS } from '../../src/controlplane/telemetry.js';

// parseReport takes an event that is valid as sent without building the paths its errors
// would name, and reads an object's keys with for-in rather than Object.keys: every event
// that is not valid as sent must still get exactly the details of the checked way.

const base = { serverId: '1', ts: '2026-11-29T06:00:00Z', botCount: 1, playersOnline: 2, linesSpoken: 3, spendUsd: 0 };

function details(body: unknown): { path: string; message: string }[] {
  try {
    parseReport(body);
  } catch (err) {
    assert.ok(err instanceof HttpError);
    assert.equal(err.code, 'validation_failed');
    return err.details ?? [];
  }
  return [];
}

test('valid events are taken as sent, in order, as {kind, count}', () => {
  const events = [
    { kind: 'spoke', count: 6 },
    { count: 0, kind: 'plan' },
    { kind: 'k'.repeat(TELEMETRY_LIMITS.maxKind), count: 1e12 },
    { kind: '😀', count: 1 },
  ];
  const report = parseReport({ ...base, events });
  assert.deepEqual(report.events, [
    { kind: 'spoke', count: 6 },
    { kind: 'plan', count: 0 },
    { kind: 'k'.repeat(TELEMETRY_LIMITS.maxKind), count: 1e12 },
    { kind: '😀', count: 1 },
  ]);
  assert.deepEqual(
    report.events.map((e) => Object.keys(e)),
    events.map(() => ['kind', 'count']),
  );
});

test('every event that is not valid as sent gets the details of the checked way, at its own index', () => {
  const cases: [unknown, { path: string; message: string }[]][] = [
    [null, [{ path: 'events[1]', message: 'must be an object, got null' }]],
    [[1], [{ path: 'events[1]', message: 'must be an object, got array' }]],
    [{ kind: 'a', count: 1, x: 1 }, [{ path: 'events[1].x', message: 'is not a known field' }]],
    [{ kind: '', count: 1 }, [{ path: 'events[1].kind', message: 'must be 1 to 64 characters, got 0' }]],
    [{ kind: 'k'.repeat(65), count: 1 }, [{ path: 'events[1].kind', message: 'must be 1 to 64 characters, got 65' }]],
    [
      { kind: 'a\0b', count: 1 },
      [{ path: 'events[1].kind', message: 'must be well-formed Unicode without U+0000 (a lone surrogate or a NUL cannot be stored as sent)' }],
    ],
    [
      { kind: 'a\ud800', count: 1 },
      [{ path: 'events[1].kind', message: 'must be well-formed Unicode without U+0000 (a lone surrogate or a NUL cannot be stored as sent)' }],
    ],
    [{ kind: 7, count: 1 }, [{ path: 'events[1].kind', message: 'must be a string, got number' }]],
    [{ count: 1 }, [{ path: 'events[1].kind', message: 'is required' }]],
    [{ kind: 'a' }, [{ path: 'events[1].count', message: 'is required' }]],
    [{ kind: 'a', count: 1.5 }, [{ path: 'events[1].count', message: 'must be a non-negative integer, got 1.5' }]],
    [{ kind: 'a', count: -1 }, [{ path: 'events[1].count', message: 'must be a non-negative integer, got -1' }]],
    [{ kind: 'a', count: 1e12 + 1 }, [{ path: 'events[1].count', message: 'must be a non-negative integer, got 1000000000001' }]],
    [{ kind: 'a', count: '3' }, [{ path: 'events[1].count', message: 'must be a non-negative integer, got string' }]],
    [
      { kind: '', count: -1, y: 2 },
      [
        { path: 'events[1].y', message: 'is not a known field' },
        { path: 'events[1].kind', message: 'must be 1 to 64 characters, got 0' },
        { path: 'events[1].count', message: 'must be a non-negative integer, got -1' },
      ],
    ],
  ];
  for (const [event, expected] of cases) {
    assert.deepEqual(details({ ...base, events: [{ kind: 'ok', count: 1 }, event] }), expected, JSON.stringify(event));
  }
});

test('unknown keys are named in the order sent, `__proto__` from JSON included', () => {
  const body = JSON.parse(`{"zeta":1,${JSON.stringify(base).slice(1, -1)},"events":[{"kind":"a","count":1,"__proto__":2}],"__proto__":3,"7":0}`);
  assert.deepEqual(
    details(body).map((d) => d.path),
    ['7', 'zeta', '__proto__', 'events[0].__proto__'],
  );
});
