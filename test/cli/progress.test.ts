import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duration, PLAIN_EVERY_MS, progress, progressLine, TTY_REDRAW_MS } from '../../src/cli/progress.js';

function fake(isTTY: boolean) {
  let t = 1_000;
  const out: string[] = [];
  return { out, stream: { isTTY, write: (s: string) => out.push(s) > 0 }, now: () => t, advance: (ms: number) => (t += ms) };
}

test('not a terminal: a plain line every few seconds, then a last one with the time it took; nothing before the first is due', () => {
  const f = fake(false);
  const p = progress({ label: 'sim greeting', total: 1000, unit: 'steps', stream: f.stream, now: f.now });
  p.update(0);
  for (let done = 1; done <= 400; done++) {
    f.advance(25);
    p.update(done);
  }
  // 400 steps in 10 s: a line at 5 s and one at 10 s.
  assert.deepEqual(f.out, [
    'sim greeting: 200/1,000 steps (20%), 40 steps/s, about 20 s left\n',
    'sim greeting: 400/1,000 steps (40%), 40 steps/s, about 15 s left\n',
  ]);
  f.advance(PLAIN_EVERY_MS - 1);
  p.update(401);
  assert.equal(f.out.length, 2);
  p.finish(1000);
  assert.equal(f.out[2], 'sim greeting: 1,000/1,000 steps (100%), 67 steps/s, done in 15 s\n');
  p.update(1000);
  p.finish();
  assert.equal(f.out.length, 3, 'nothing after finish');
});

test('a terminal: one line rewritten in place at most every 100 ms, ended by the last one', () => {
  const f = fake(true);
  const p = progress({ label: 'replay x.jsonl', total: null, unit: 'ticks', stream: f.stream, now: f.now });
  p.update(0);
  for (let done = 1; done <= 100; done++) {
    f.advance(10);
    p.update(done, 200);
  }
  assert.equal(f.out.length, 10);
  for (const line of f.out) assert.match(line, /^\r\x1b\[2Kreplay x\.jsonl: \d+\/200 ticks \(\d+%\), [\d,]+ ticks\/s, about \d+ s left$/);
  p.finish();
  assert.match(f.out.at(-1)!, /^\r\x1b\[2Kreplay x\.jsonl: 100\/200 ticks \(50%\), 100 ticks\/s, done in 1 s\n$/);
  assert.ok(TTY_REDRAW_MS < PLAIN_EVERY_MS);
});

test('--json, or a command over before the first line is due, prints nothing', () => {
  const f = fake(true);
  const quiet = progress({ label: 'sim', total: 10, unit: 'steps', stream: f.stream, now: f.now, json: true });
  quiet.update(0);
  f.advance(60_000);
  quiet.update(5);
  quiet.finish(10);
  const short = progress({ label: 'sim', total: 10, unit: 'steps', stream: f.stream, now: f.now });
  short.update(0);
  f.advance(50);
  short.update(10);
  short.finish();
  assert.deepEqual(f.out, []);
});

test('progress lines: without a total no percentage or time left; durations read as people say them', () => {
  assert.equal(progressLine('bench', 1500, null, 'ticks', 500, 3000), 'bench: 1,500 ticks, 500 ticks/s');
  assert.equal(progressLine('bench', 0, 10, 'ticks', 0, 0), 'bench: 0/10 ticks (0%), 0 ticks/s');
  assert.equal(progressLine('bench', 4, 10, 'ticks', 2, 1000), 'bench: 4/10 ticks (40%), 2 ticks/s, about 3 s left');
  assert.equal(duration(400), '0 s');
  assert.equal(duration(59_400), '59 s');
  assert.equal(duration(80_000), '1 min 20 s');
  assert.equal(duration(7_500_000), '2 h 05 min');
});
