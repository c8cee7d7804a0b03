/**
 * The limits and late-reply rules every reference client carries as named constants: the
 * batch limits must be the sidecar's own, and the clients must agree with each other.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_BATCH_TICKS, TICKS_MAX_BODY } from '../../src/sidecar/tick/tick-array.js';
import { clientsDir } from './helpers.js';

const read = (path: string) => readFileSync(join(clientsDir, path), 'utf8');
const python = read('python/brainstem_client.py');
const lua = read('lua/brainstem.lua');
const csharp = read('csharp/Brainstem.cs');
const dayz = read('dayz/Brainstem/scripts/3_Game/Brainstem/BrainstemClient.c');

/** The value of a constant written as a product of integers or a decimal (`4 * 1024 * 1024`, `1.0`). */
function constant(source: string, pattern: RegExp): number {
  const m = pattern.exec(source);
  assert.ok(m, `no match for ${pattern}`);
  return m[1]!.split('*').reduce((product, factor) => product * Number(factor.trim()), 1);
}

test('every client batches at most as many ticks as the sidecar takes', () => {
  assert.equal(constant(python, /^MAX_BATCH = ([\d* ]+)$/m), MAX_BATCH_TICKS);
  assert.equal(constant(lua, /^Brainstem\.MAX_BATCH = ([\d* ]+)$/m), MAX_BATCH_TICKS);
  assert.equal(constant(csharp, /public const int MaxTicks = ([\d* ]+);/), MAX_BATCH_TICKS);
  assert.equal(constant(dayz, /static const int MAX_BATCH = ([\d* ]+);/), MAX_BATCH_TICKS);
});

test('the clients that split long lists keep each body under the sidecar limit', () => {
  assert.equal(constant(python, /^MAX_BODY_BYTES = ([\d* ]+)$/m), TICKS_MAX_BODY);
  assert.equal(constant(csharp, /public const int MaxBodyBytes = ([\d* ]+);/), TICKS_MAX_BODY);
});

test('the game clients agree on when a batch is late and how many calls may be out', () => {
  const late = [
    constant(lua, /^Brainstem\.DEFAULT_LATE_AFTER_S = ([\d.]+)$/m),
    constant(csharp, /public const double DefaultLateAfterS = ([\d.]+);/),
    constant(dayz, /static const float LATE_AFTER_S = ([\d.]+);/),
  ];
  assert.deepEqual(late, [1, 1, 1]);
  const outstanding = [
    constant(lua, /^Brainstem\.DEFAULT_MAX_OUTSTANDING = (\d+)$/m),
    constant(csharp, /public const int DefaultMaxOutstanding = (\d+);/),
    constant(dayz, /static const int MAX_OUTSTANDING = (\d+);/),
  ];
  assert.deepEqual(outstanding, [4, 4, 4]);
});
