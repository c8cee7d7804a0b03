import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { cpuQuotas } from '../../bench/cgroup.js';

// The replica benchmarks give each serve process a CPU quota of its own. What matters: a
// process started through a quota is in its group from its first instruction, the group is
// gone afterwards, and a machine without writable cgroups gets a reason, never a crash.

test('a process started through a CPU quota runs inside its group, and the group is removed after', (t) => {
  const quotas = cpuQuotas(0.25, 'brainstem-test');
  if (!quotas.available) {
    t.skip(`no CPU quotas here: ${quotas.reason}`);
    return;
  }
  const quota = quotas.create('inside');
  let removed = false;
  try {
    const [cmd, args] = quota.wrap(process.execPath, ['-e', 'process.stdout.write(require("fs").readFileSync("/proc/self/cgroup", "utf8"))']);
    const groups = execFileSync(cmd, args, { encoding: 'utf8' });
    assert.match(groups, new RegExp(`brainstem-test-${process.pid}-inside`));
    quota.remove();
    removed = true;
    const left = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup']
      .filter(existsSync)
      .flatMap((d) => readdirSync(d))
      .filter((n) => n.startsWith(`brainstem-test-${process.pid}`));
    assert.deepEqual(left, []);
  } finally {
    if (!removed) quota.remove();
  }
});

test("a child the confined process starts later (a worker's ffmpeg) is inside the same quota", (t) => {
  const quotas = cpuQuotas(0.25, 'brainstem-test');
  if (!quotas.available) {
    t.skip(`no CPU quotas here: ${quotas.reason}`);
    return;
  }
  const quota = quotas.create('children');
  try {
    // The confined node process spawns a shell that reports its own cgroups, as a render worker spawns ffmpeg.
    const script = `process.stdout.write(require("child_process").execFileSync("/bin/sh", ["-c", "cat /proc/self/cgroup"], { encoding: "utf8" }))`;
    const [cmd, args] = quota.wrap(process.execPath, ['-e', script]);
    const groups = execFileSync(cmd, args, { encoding: 'utf8' });
    assert.match(groups, new RegExp(`brainstem-test-${process.pid}-children`));
  } finally {
    quota.remove();
  }
});

test('a quota outside 0 to 64 cores is refused with the reason', () => {
  for (const f of [0, -1, 65, Number.NaN]) {
    const q = cpuQuotas(f, 'brainstem-test');
    assert.equal(q.available, false);
    if (!q.available) assert.match(q.reason, /not between 0 and 64/);
  }
});
