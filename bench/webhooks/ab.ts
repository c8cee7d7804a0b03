// Paired runs of `bench webhooks` scenarios from two builds (two worktrees) on a shared, noisy
// machine: the builds alternate, round by round and in alternating order, each run in a fresh
// process, so both see the same load. Every run measures its own raw-POST baseline; the ratio
// of each run is against its own baseline (with `--bench-rounds N`, a build whose bench has rounds
// compares each scenario with the baselines around it, the median of N rounds).
//
//   node dist/bench/webhooks/ab.js --a /work/wt-hooks-base --b . --rounds 4 --deliveries 20000 \
//     --scenarios '10 endpoints,100 endpoints'   (or 'a|b' when a name holds a comma)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    deliveries: { type: 'string', default: '20000' },
    scenarios: { type: 'string', default: '10 endpoints,100 endpoints' },
    /** Rounds inside each run (a build whose bench has no rounds runs one). */
    'bench-rounds': { type: 'string', default: '1' },
  },
});
if (!values.a || !values.b) throw new Error('usage: ab.js --a TREE --b TREE [--rounds N] [--deliveries N] [--scenarios a,b]');
const trees = { a: resolve(values.a), b: resolve(values.b) };
// Names holding a comma ('10 endpoints, v1a') are separated by '|' instead.
const names = values.scenarios.split(values.scenarios.includes('|') ? '|' : ',').map((s) => s.trim());
const deliveries = Number(values.deliveries);

const child = `
const tree = process.argv[2];
const names = JSON.parse(process.argv[3]);
const { runWebhooksBench } = await import(tree + '/dist/bench/webhooks/run.js');
const { SCENARIOS } = await import(tree + '/dist/bench/webhooks/scenarios.js');
const chosen = names.map((n) => { const s = SCENARIOS.find((x) => x.name === n); if (!s) throw new Error('no scenario ' + n); return s; });
const r = await runWebhooksBench({ deliveries: Number(process.argv[4]), events: 100, rounds: Number(process.argv[5]) }, chosen);
const pct = (s) => Math.round(1000 * (s.vsBaseline ?? s.deliveriesPerSec / r.baseline.requestsPerSec)) / 10;
process.stdout.write(JSON.stringify({ baseline: r.baseline.requestsPerSec, baselineCpuMs: r.baseline.cpuMsPerRequest ?? null, scenarios: r.scenarios.map((s) => ({ name: s.scenario, perSec: s.deliveriesPerSec, cpuMs: s.cpuMsPerDelivery, pct: pct(s) })) }));
`;

// A file, not --eval: the bench forks its receiver with the parent's exec flags.
const dir = mkdtempSync(join(tmpdir(), 'hooks-ab-'));
const script = join(dir, 'run.mjs');
writeFileSync(script, child);
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

interface Run {
  baseline: number;
  /** CPU ms per raw POST (null from a build whose bench did not measure it). */
  baselineCpuMs: number | null;
  scenarios: { name: string; perSec: number; cpuMs: number; pct: number }[];
}
const rows: string[] = [];
const all: Record<'a' | 'b', Run[]> = { a: [], b: [] };
const head = `| round | build | load | baseline/s, CPU ms | ${names.map((n) => `${n}: /s, % of baseline, CPU ms`).join(' | ')} |`;
console.log(head);
console.log(
  `|${head
    .split('|')
    .slice(1, -1)
    .map(() => '---')
    .join('|')}|`,
);
for (let round = 1; round <= Number(values.rounds); round++) {
  const order: ('a' | 'b')[] = round % 2 === 1 ? ['a', 'b'] : ['b', 'a'];
  for (const which of order) {
    const load = loadavg()[0]!.toFixed(1);
    const out = spawnSync(process.execPath, [script, trees[which], JSON.stringify(names), String(deliveries), values['bench-rounds']], {
      cwd: trees[which],
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (out.status !== 0) throw new Error(`run of ${which} failed (${out.status})`);
    const r = JSON.parse(out.stdout) as Run;
    all[which].push(r);
    const row = `| ${round} | ${which} | ${load} | ${r.baseline}, ${r.baselineCpuMs ?? '–'} | ${r.scenarios.map((s) => `${s.perSec}, ${s.pct}%, ${s.cpuMs}`).join(' | ')} |`;
    rows.push(row);
    console.log(row);
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return Math.round(m * 10_000) / 10_000;
};
for (const which of ['a', 'b'] as const) {
  const runs = all[which];
  const parts = names.map((n, i) => {
    const xs = runs.map((r) => r.scenarios[i]!);
    return `${n}: median ${median(xs.map((x) => x.pct))}% of baseline, ${median(xs.map((x) => x.cpuMs))} ms CPU/delivery`;
  });
  const cpus = runs.flatMap((r) => (r.baselineCpuMs === null ? [] : [r.baselineCpuMs]));
  const baseCpu = cpus.length > 0 ? `, ${median(cpus)} ms CPU per raw POST` : '';
  console.log(`${which} (${trees[which]}${gitHead(trees[which])}): baseline median ${median(runs.map((r) => r.baseline))}/s${baseCpu}; ${parts.join('; ')}`);
}

function gitHead(tree: string): string {
  try {
    return ` at ${execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}`;
  } catch {
    return '';
  }
}
