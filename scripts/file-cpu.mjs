// Preloaded (`--import`) into each test file's process by `scripts/run-tests.mjs --cpu`: at exit the
// file's process appends one line to the file BRAINSTEM_TEST_CPU names: its pid, its own CPU, the CPU
// of the children it reaped (every server, CLI, ffmpeg it spawned and waited for, with their own
// reaped children), its wall time, and its path. CPU is user + system, in ms.
import { appendFileSync, readFileSync } from 'node:fs';

const out = process.env.BRAINSTEM_TEST_CPU;
const file = process.argv[1] ?? '';
if (out && /\.test\.m?js$/.test(file)) {
  const started = performance.timeOrigin;
  process.on('exit', () => {
    const own = process.cpuUsage();
    const ownMs = Math.round((own.user + own.system) / 1000);
    appendFileSync(out, `${process.pid}\t${ownMs}\t${reapedCpuMs()}\t${Math.round(Date.now() - started)}\t${file}\n`);
  });
}

/** The CPU of the children this process has reaped (and theirs), in ms; 0 where /proc cannot be read (not Linux). */
export function reapedCpuMs() {
  try {
    // Fields 16 and 17 (cutime, cstime) after the command name, which may hold spaces; in clock ticks of 10 ms (Linux's USER_HZ).
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}
