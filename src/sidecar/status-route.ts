import { json } from '../http/reply.js';
import type { HttpServer } from '../http/server.js';
import { GATE_HEADERS, type BearerGate } from './auth.js';
import type { DialogueTier } from '../dialogue/tier.js';
import type { ConfigStatus } from './config/config-source.js';
import type { Evaluator } from './tick/evaluator.js';
import type { TickCounters } from './tick/handler.js';
import type { LatencySummary } from './tick/histogram.js';

/** What the sidecar knows of itself, as GET /status shows it (the route owns the shape it serves). */
export interface SidecarStatus {
  config: ConfigStatus;
  evaluator: { mode: Evaluator['mode']; workers: number };
  ticks: TickCounters;
  latency: LatencySummary;
  /** Agents the brains hold: live inline; with workers, as of the last drainTelemetry (null before the first). */
  agents: number | null;
  /** The dialogue tier's state (DialogueTier.status()), null without a tier. */
  dialogue: ReturnType<DialogueTier['status']> | null;
  /** The brain state file, null when memory is not kept. */
  stateFile: string | null;
}

const ms = (us: number): number => Math.round(us) / 1000;

/**
 * GET /status: the applied bundle (version, source), tick counters and latency, and whatever
 * the caller adds (the control-plane client's pull, push and buffer state). Behind the bearer
 * gate when one is set, like /tick.
 */
export function mountStatus(server: HttpServer, gate: BearerGate | null, status: () => SidecarStatus, extras: () => Record<string, unknown>): void {
  server.get(
    '/status',
    (req) => {
      gate?.checkRequest(req);
      const s = status();
      const l = s.latency;
      return json(200, {
        version: s.config.version,
        source: s.config.source,
        location: s.config.location,
        lastError: s.config.lastError,
        lastErrorSince: s.config.lastErrorSince,
        ...extras(),
        agents: s.agents,
        evaluator: s.evaluator,
        ticks: s.ticks,
        latency: { count: l.count, p50_ms: ms(l.p50_us), p90_ms: ms(l.p90_us), p99_ms: ms(l.p99_us), p999_ms: ms(l.p999_us), max_ms: ms(l.max_us) },
      });
    },
    { headers: GATE_HEADERS },
  );
}
