import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A CPU quota of its own for each process a benchmark measures: "a replica on its own core" at
 * a smaller size, on a machine with fewer cores than replicas. Each quota is a CPU cgroup that
 * the benchmark creates and removes itself (root only): cgroup v1's `cpu.cfs_quota_us` under
 * /sys/fs/cgroup/cpu, or cgroup v2's `cpu.max`. A process started through `wrap` is born inside
 * its group, so every thread it makes is counted against the quota.
 */
export interface CpuQuota {
  /** The command and arguments that start `cmd args` inside this group. */
  wrap(cmd: string, args: string[]): [string, string[]];
  /** Removes the group; its processes must have exited. */
  remove(): void;
}

/** The quotas a run makes, or why it cannot make them (then it measures without and says so). */
export type CpuQuotas = { available: true; create(name: string): CpuQuota; fraction: number } | { available: false; reason: string };

const PERIOD_US = 100_000;
const V1_ROOT = '/sys/fs/cgroup/cpu';
const V2_ROOT = '/sys/fs/cgroup';

/** The cgroup file system this machine has for CPU quotas, or why there is none. */
function hierarchy(): { kind: 'v1' | 'v2'; root: string } | string {
  if (existsSync(join(V1_ROOT, 'cpu.cfs_quota_us'))) return { kind: 'v1', root: V1_ROOT };
  if (existsSync(join(V2_ROOT, 'cgroup.controllers'))) {
    const controllers = readFileSync(join(V2_ROOT, 'cgroup.controllers'), 'utf8');
    if (!/\bcpu\b/.test(controllers)) return 'cgroup v2 without the cpu controller';
    return { kind: 'v2', root: V2_ROOT };
  }
  return 'no CPU cgroup file system under /sys/fs/cgroup';
}

/**
 * Quotas of `fraction` of one core each, named after `prefix`. Probes once by making and
 * removing a group: not root, a read-only /sys/fs/cgroup or a missing controller each give
 * the reason instead.
 */
export function cpuQuotas(fraction: number, prefix: string): CpuQuotas {
  if (!(fraction > 0 && fraction <= 64)) return { available: false, reason: `a quota of ${fraction} cores is not between 0 and 64` };
  const h = hierarchy();
  if (typeof h === 'string') return { available: false, reason: h };
  const quotaUs = Math.max(1000, Math.round(fraction * PERIOD_US));
  const create = (name: string): CpuQuota => {
    const dir = join(h.root, `${prefix}-${process.pid}-${name}`);
    mkdirSync(dir, { recursive: true });
    if (h.kind === 'v1') {
      writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
    } else writeFileSync(join(dir, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
    const procs = join(dir, 'cgroup.procs');
    return {
      // The shell joins the group, then becomes the command: nothing runs outside the quota.
      wrap: (cmd, args) => ['/bin/sh', ['-c', `echo $$ > "$0" && exec "$@"`, procs, cmd, ...args]],
      remove: () => {
        for (let attempt = 0; attempt < 50; attempt++) {
          try {
            rmdirSync(dir);
            return;
          } catch (err) {
            // EBUSY while the last process is still being reaped; anything else is final.
            if ((err as NodeJS.ErrnoException).code !== 'EBUSY') return;
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
          }
        }
      },
    };
  };
  try {
    create('probe').remove();
  } catch (err) {
    return { available: false, reason: `cannot write ${h.root} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; quotas need root)` };
  }
  return { available: true, create, fraction };
}
