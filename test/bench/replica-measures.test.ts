import test from 'node:test';
import assert from 'node:assert/strict';
import { statementTimes, wakeCounts } from '../../bench/control-plane/replicas.js';

// What the replica benchmarks read besides CPU time: a process's wake-ups and system calls from
// /proc, and PostgreSQL's time by statement between two pg_stat_statements snapshots.

test("wakeCounts reads a live process's wake-ups and system calls, and they only grow", async () => {
  const a = wakeCounts(process.pid);
  await new Promise((r) => setTimeout(r, 5));
  const b = wakeCounts(process.pid);
  assert.ok(a.wakes >= 0 && a.syscalls > 0);
  assert.ok(b.wakes >= a.wakes && b.syscalls >= a.syscalls);
});

test("statementTimes gives each statement's share of the window, most time first, and nothing without snapshots", () => {
  const row = (text: string, calls: number, execMs: number) => ({ text, calls, execMs, rows: calls, walBytes: calls * 10, blocks: calls * 2 });
  const before = new Map([
    ['1', row('SELECT  1', 5, 10)],
    ['2', row('INSERT x', 1, 1)],
  ]);
  const after = new Map([
    ['1', row('SELECT  1', 7, 11)],
    ['2', row('INSERT x', 4, 31)],
    ['3', row('UPDATE y', 2, 4)],
  ]);
  assert.deepEqual(statementTimes(before, after), [
    { statement: 'INSERT x', calls: 3, execMs: 30, rows: 3, walBytes: 30, blocks: 6 },
    { statement: 'UPDATE y', calls: 2, execMs: 4, rows: 2, walBytes: 20, blocks: 4 },
    { statement: 'SELECT 1', calls: 2, execMs: 1, rows: 2, walBytes: 20, blocks: 4 },
  ]);
  assert.equal(statementTimes(null, after), null);
});
