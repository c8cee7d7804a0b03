/**
 * Micro-benchmark of DialogueTier.onTick, the dialogue tier's only call on the tick path:
 * the same scripted population ticked with the dialogue tier off (baseline) and on, the
 * model server (the scripted OpenAI-compatible server, through the real dialogue plugin
 * child process) answering each line after `latencyMs`. Both variants run in one process,
 * one after the other, so they share the machine's noise.
 */
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import { ROLES } from '../../brain/types.js';
import type { DialogueContext } from '../../src/dialogue/context.js';
import { createDialogueTier } from '../../src/dialogue/create.js';
import type { DialogueBundle, DialogueTier } from '../../src/dialogue/tier.js';
import { startFakeOpenAI } from '../fake-openai.js';

export interface DialogueBenchOptions {
  agents: number;
  /** Real seconds each variant runs. */
  seconds: number;
  /** Model latency, ms. */
  latencyMs: number;
}

export interface VariantResult {
  variant: 'off' | 'on';
  calls: number;
  ns_per_op: number;
  p50_ns: number;
  p99_ns: number;
  max_ns: number;
  spoke: number;
  llm_requests: number;
  cache_hits: number;
}

export interface DialogueBenchResult {
  options: DialogueBenchOptions;
  node: string;
  /** Median cost of the timing itself, included in the per-call percentiles (not in ns/op). */
  timer_overhead_ns: number;
  results: VariantResult[];
  /** on ns/op minus off ns/op. */
  overhead_ns_per_op: number;
}

const BUNDLE: DialogueBundle = {
  ...DEFAULT_BUNDLE,
  speech: { limits: { per_5min: 3, per_hour: 20, per_day: 120, economy: 'Chatty' }, phrase_cache: { ...DEFAULT_BUNDLE.speech.phrase_cache } },
};

/** One context per agent, built once and mutated in place, as a tick handler would. */
function population(n: number): DialogueContext[] {
  return Array.from({ length: n }, (_, i) => ({
    persona: {
      name: `Bot${i}`,
      role: ROLES[i % ROLES.length]!,
      traits: { extraversion: (i % 10) / 10, neuroticism: ((i * 7) % 10) / 10 },
      themes: ['misses their family'],
      goal: i % 2 ? 'find water' : 'guard the camp',
      emotion: { name: 'wary', intensity: (i % 3) / 3 },
      memory: '',
    },
    // Every third agent has a player near; others are alone (the common, cheap case).
    players: i % 3 === 0 ? [{ id: 1000 + i, name: `Player${i}`, distance_m: 8 }] : [],
    heard: [],
    doing: 'patrolling',
    event: null,
  }));
}

/** Exact per-call latencies: a 1-ns histogram up to 1 ms, and the rare slower calls listed. */
class Histogram {
  private readonly counts = new Uint32Array(1_000_000);
  private readonly slow: number[] = [];
  n = 0;

  add(ns: number): void {
    this.n++;
    if (ns < this.counts.length) this.counts[ns]!++;
    else this.slow.push(ns);
  }

  percentile(q: number): number {
    const rank = Math.ceil(q * this.n);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return i;
    }
    const slow = this.slow.sort((a, b) => a - b);
    return slow[Math.min(slow.length - 1, rank - seen - 1)] ?? 0;
  }

  reset(): void {
    this.counts.fill(0);
    this.slow.length = 0;
    this.n = 0;
  }

  max(): number {
    if (this.slow.length) return Math.max(...this.slow);
    for (let i = this.counts.length - 1; i >= 0; i--) if (this.counts[i]! > 0) return i;
    return 0;
  }
}

/** One variant's state during the run. */
class Variant {
  readonly contexts: DialogueContext[];
  readonly hist = new Histogram();
  readonly lastHeard: Float64Array;
  batchNs = 0n;
  batchCalls = 0;

  constructor(
    readonly name: 'off' | 'on',
    readonly tier: DialogueTier,
    agents: number,
  ) {
    this.contexts = population(agents);
    this.lastHeard = new Float64Array(agents).fill(-Infinity);
  }

  /** One round: every agent ticked once at game time t. */
  round(t: number, perCall: boolean): void {
    const contexts = this.contexts;
    const tier = this.tier;
    const batchStart = process.hrtime.bigint();
    for (let a = 0; a < contexts.length; a++) {
      const ctx = contexts[a]!;
      // Someone speaks to every 10th agent every 5 s of game time.
      if (a % 10 === 0 && t - this.lastHeard[a]! >= 5) {
        this.lastHeard[a] = t;
        ctx.heard = [{ from: 1000 + a, text: 'got any water?', at_s: t }];
      }
      if (perCall) {
        const start = process.hrtime.bigint();
        tier.onTick(a, t, ctx);
        this.hist.add(Number(process.hrtime.bigint() - start));
      } else tier.onTick(a, t, ctx);
    }
    if (!perCall) {
      this.batchNs += process.hrtime.bigint() - batchStart;
      this.batchCalls += contexts.length;
    }
  }

  result(): VariantResult {
    const c = this.tier.drainCounters();
    return {
      variant: this.name,
      calls: this.batchCalls + this.hist.n,
      ns_per_op: Math.round((Number(this.batchNs) / this.batchCalls) * 10) / 10,
      p50_ns: this.hist.percentile(0.5),
      p99_ns: this.hist.percentile(0.99),
      max_ns: this.hist.max(),
      spoke: c.spoke,
      llm_requests: c.llmRequests,
      cache_hits: c.cacheHits,
    };
  }
}

/** What timing one call costs by itself (two hrtime reads around an empty function). */
function timerOverheadNs(): number {
  const h = new Histogram();
  const noop = (): null => null;
  for (let i = 0; i < 200_000; i++) {
    const start = process.hrtime.bigint();
    noop();
    h.add(Number(process.hrtime.bigint() - start));
  }
  return h.percentile(0.5);
}

export async function runDialogueBench(opts: DialogueBenchOptions): Promise<DialogueBenchResult> {
  const fake = await startFakeOpenAI({ latencyMs: opts.latencyMs });
  const env = {
    ...process.env,
    SERVICE_LLM_BASE_URL: fake.baseUrl,
    SERVICE_LLM_MODEL: 'bench-model',
    SERVICE_TTS_ENGINE: 'off',
    SERVICE_LLM_CONCURRENCY: '64',
  };
  const off = new Variant('off', createDialogueTier({ bundle: { ...BUNDLE, policy: { llm_dialogue: false } }, env }), opts.agents);
  const on = new Variant('on', createDialogueTier({ bundle: BUNDLE, env }), opts.agents);
  try {
    const overhead = timerOverheadNs();
    // Game time follows the wall clock, as in a live game, so a line the model answers in
    // latencyMs arrives latencyMs of game time later; rounds run as fast as they can. The two
    // variants alternate round by round, so both see the same machine noise. The first
    // 0.5 s warms the JIT (and starts the plugin child) and is not counted.
    const began = performance.now();
    const warmEnd = began + 500;
    const end = warmEnd + opts.seconds * 1000;
    let round = 0;
    let counting = false;
    for (let now = began; now < end; now = performance.now()) {
      if (!counting && now >= warmEnd) {
        counting = true;
        for (const v of [off, on]) {
          v.tier.drainCounters();
          v.batchNs = 0n;
          v.batchCalls = 0;
          v.hist.reset();
        }
      }
      const t = (now - began) / 1000;
      // One round in eight is timed call by call (for percentiles); the rest as a batch (for ns/op).
      const perCall = round % 8 === 0;
      // Alternate which goes first, so neither always runs on a cache warmed by the other.
      const [first, second] = round % 2 === 0 ? [off, on] : [on, off];
      first.round(t, perCall);
      second.round(t, perCall);
      round++;
      // Between rounds the event loop runs, so plugin answers arrive as they would in the sidecar.
      await new Promise((r) => setImmediate(r));
    }
    const results = [off.result(), on.result()];
    return {
      options: opts,
      node: process.version,
      timer_overhead_ns: overhead,
      results,
      overhead_ns_per_op: Math.round((results[1]!.ns_per_op - results[0]!.ns_per_op) * 10) / 10,
    };
  } finally {
    await off.tier.close();
    await on.tier.close();
    await fake.close();
  }
}

export function formatTable(r: DialogueBenchResult): string {
  const head = ['variant', 'calls', 'ns/op', 'p50 ns', 'p99 ns', 'max ns', 'spoke', 'llm req', 'cache hits'];
  const rows = r.results.map((v) => [v.variant, v.calls, v.ns_per_op, v.p50_ns, v.p99_ns, v.max_ns, v.spoke, v.llm_requests, v.cache_hits].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  return [
    line(head),
    ...rows.map(line),
    `ns/op from batched rounds; percentiles per call include ~${r.timer_overhead_ns} ns of timer overhead`,
    `dialogue tier on costs ${r.overhead_ns_per_op} ns more per onTick call than off (model latency ${r.options.latencyMs} ms, ${r.options.agents} agents)`,
  ].join('\n');
}
