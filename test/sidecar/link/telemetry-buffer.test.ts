import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TelemetryBuffer } from '../../../src/sidecar/link/telemetry-buffer.js';
import { tempDir } from '../../helpers/paths.js';

const r = (n: number) => ({ reportId: `r${n}`, n });

test('reports come back oldest first across a restart, acknowledged ones never again, and a torn last line is ignored', async () => {
  const dir = tempDir();
  try {
    const a = new TelemetryBuffer(dir.path);
    await a.load();
    for (let i = 1; i <= 5; i++) await a.append(r(i));
    assert.equal(a.headLine()?.id, 'r1');
    await a.ack('r1');
    await a.ack('r2');
    await a.ack('r4'); // not the head: ignored
    assert.equal(a.size, 3);
    appendFileSync(join(dir.path, 'telemetry.jsonl'), '{"reportId":"r6","n":'); // crash mid-append

    const b = new TelemetryBuffer(dir.path);
    await b.load();
    assert.equal(b.size, 3);
    assert.deepEqual(b.head(), r(3));
    await b.ack('r3');
    await b.append(r(7));
    const c = new TelemetryBuffer(dir.path);
    await c.load();
    const ids: string[] = [];
    for (let h = c.headLine(); h; h = c.headLine()) {
      ids.push(h.id);
      await c.ack(h.id);
    }
    assert.deepEqual(ids, ['r4', 'r5', 'r7']);
  } finally {
    dir.dispose();
  }
});

test('beyond the cap the oldest reports are dropped and counted, across a restart', async () => {
  const dir = tempDir();
  try {
    const a = new TelemetryBuffer(dir.path, 3);
    await a.load();
    await Promise.all([1, 2, 3, 4, 5].map((i) => a.append(r(i))));
    assert.equal(a.size, 3);
    assert.equal(a.dropped, 2);
    assert.equal(a.headLine()?.id, 'r3');
    const b = new TelemetryBuffer(dir.path, 3);
    await b.load();
    assert.equal(b.size, 3);
    assert.equal(b.dropped, 2);
    assert.equal(b.headLine()?.id, 'r3');
  } finally {
    dir.dispose();
  }
});

test('the file is compacted once many reports were acknowledged', async () => {
  const dir = tempDir();
  try {
    const a = new TelemetryBuffer(dir.path);
    await a.load();
    for (let i = 0; i < 70; i++) await a.append(r(i));
    for (let i = 0; i < 69; i++) await a.ack(`r${i}`);
    const lines = readFileSync(join(dir.path, 'telemetry.jsonl'), 'utf8').trim().split('\n');
    assert.ok(lines.length < 10, `${lines.length} lines left`);
    assert.equal(JSON.parse(lines.at(-1)!).reportId, 'r69');
  } finally {
    dir.dispose();
  }
});
