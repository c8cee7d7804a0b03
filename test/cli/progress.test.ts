import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duration, PLAIN_EVERY_MS, progress, progressLine, timedLine, timedProgress, TTY_REDRAW_MS } from '../../src/cli/progress.js';
import { expectedSeconds } from '../../src/cli/commands/bench.js';

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

test('timed work (a benchmark): time run against the time expected, then done; unknown length says how long it has run', () => {
  assert.equal(timedLine('bench tick', 65, 252, 65_000, false), 'bench tick: 1 min 05 s of about 4 min 12 s (25%), about 3 min 07 s left');
  assert.equal(timedLine('bench video', 40, null, 40_000, false), 'bench video: running for 40 s');
  assert.equal(timedLine('bench tick', 300, 252, 300_000, false), 'bench tick: 5 min 00 s, past the expected 4 min 12 s');
  assert.equal(timedLine('bench tick', 250, 252, 250_400, true), 'bench tick: done in 4 min 10 s');
});

test('a benchmark that runs past the first line prints plain lines off a terminal, kept up by a timer; with --json nothing', async () => {
  let t = 0;
  const out: string[] = [];
  const stream = { isTTY: false, write: (s: string) => out.push(s) > 0 };
  const end = timedProgress('bench x', 20, false, { stream, now: () => t, tickMs: 1 });
  for (const at of [1000, 2000, 5000, 6000, 10_000, 11_000]) {
    t = at;
    await new Promise((r) => setTimeout(r, 5));
  }
  end();
  assert.deepEqual(out, [
    'bench x: 5 s of about 20 s (25%), about 15 s left\n',
    'bench x: 10 s of about 20 s (50%), about 10 s left\n',
    'bench x: done in 11 s\n',
  ]);
  const silent: string[] = [];
  const quiet = timedProgress('bench x', 20, true, { stream: { isTTY: false, write: (s: string) => silent.push(s) > 0 }, now: () => t, tickMs: 1 });
  t += 60_000;
  await new Promise((r) => setTimeout(r, 5));
  quiet();
  assert.deepEqual(silent, []);
});

test('what a benchmark is expected to take comes from its flags where its phases are timed runs', () => {
  assert.equal(expectedSeconds('control-plane', { rounds: '3', duration: '5' }), 63);
  assert.equal(expectedSeconds('control-plane', { rounds: '3', duration: '5', database: 'postgres://x/y' }), null);
  assert.equal(expectedSeconds('soak', { duration: '600', baseline: '30' }), 660);
  assert.equal(expectedSeconds('video', {}), null);
});
