import type { MapSurvivor, Survivor } from '../../brain/index.js';
import type { DialogueCounters } from '../dialogue/context.js';
import { createDialogueTier, type CreateDialogueTierOptions } from '../dialogue/create.js';
import type { DialogueTier, LinesFrom } from '../dialogue/tier.js';
import { mountVoiceRoutes } from '../dialogue/voice-routes.js';
import type { ConnectionCaps } from '../http/connections.js';
import { HttpServer } from '../http/server.js';
import type { RequestObserver } from '../http/observe.js';
import type { Registry } from 'prom-client';
import { text } from '../http/reply.js';
import { silentLogger, type Logger } from '../log.js';
import { BearerGate } from './auth.js';
import type { ConfigSource } from './config/config-source.js';
import { DialogueWiring } from './dialogue.js';
import { mergeEvents, type BrainTelemetry, type Evaluator } from './tick/evaluator.js';
import { createEvaluator } from './tick/pool.js';
import { StateKeeper } from './state/state-file.js';
import { PlayerTracker, RecentAgents } from './state/players.js';
import { mountStatus, type SidecarStatus } from './status-route.js';
import { mountMetrics, sidecarRegistry } from './metrics.js';
import { TICK_MAX_BODY, TickHandler } from './tick/handler.js';
import { mountTick, mountTicks } from './tick/routes.js';
import { FlagSet, mountOfrep } from './flags/ofrep.js';

export interface SidecarOptions {
  host: string;
  /** 0 picks a free port; the bound one is on the returned Sidecar. */
  port: number;
  source: ConfigSource;
  /** 0 evaluates on the main thread; N > 0 shards agents over N single-thread worker pools. */
  workers: number;
  /** Caps on open connections, per client address and in all (default 1,000 and 20,000). */
  connections?: ConnectionCaps;
  /** Bytes of request bodies held while they arrive, in all (default BODY_BUDGET_BYTES, see HttpServer). */
  bodyBudget?: number;
  /** When set, /tick needs `Authorization: Bearer <token>`; /health stays open. */
  token?: string | null;
  /** Largest /tick body in bytes (413 beyond). */
  maxBody?: number;
  /** Most agents each Brain keeps. */
  maxAgents?: number;
  /**
   * Turns the dialogue tier on (createDialogueTier options but the bundle, which comes from
   * the source). The caller decides from the environment (SERVICE_LLM_*); null or absent: no tier.
   */
  dialogue?: Omit<CreateDialogueTierOptions, 'bundle' | 'logger'> | null;
  /** Brain state file: restored at start, saved every stateEveryMs and on close. Null: memory is not kept. */
  stateFile?: string | null;
  /** Default 30,000 ms. */
  stateEveryMs?: number;
  /** Window of telemetry's playersOnline (PlayerTracker) and of the roster's recently ticked characters (RecentAgents), default 2 min. */
  playersWindowMs?: number;
  /** More top-level fields for GET /status (the control-plane client's state). */
  statusExtras?: () => Record<string, unknown>;
  /** Runs on close once no tick is in flight and before the brains stop (a final telemetry report). */
  beforeStop?: () => Promise<void>;
  /** More metrics for GET /metrics (the control-plane client's pulls and pushes). */
  metricsExtras?: (registry: Registry) => void;
  /** `--access-log`: told of every finished request; unset, requests pay nothing for it. */
  accessLog?: RequestObserver | null;
  /** This game server's id on the control plane: the default `server` of a flag evaluation context. */
  serverId?: string | null;
  /** Wall clock for flag time windows (Date.now). */
  now?: () => number;
  logger?: Logger;
}

/**
 * What the sidecar counted since the last drain, for the telemetry push (spec 001 §2.2, §2.4,
 * §6). `events` are the brain's counters (every worker's merged) plus `spoke`; with a
 * dialogue tier its `heard` (snapshot and voice-in lines) replaces the brain's.
 */
export interface SidecarTelemetry {
  events: Record<string, number>;
  roster: Survivor[];
  /** Agents the brains hold now. */
  agents: number;
  /** Distinct players seen in snapshots lately (see PlayerTracker); a current value, not drained. */
  playersOnline: number;
  linesSpoken: number;
  llmTokens: number;
  ttsCharacters: number;
  spendUsd: number;
  /** spendUsd split: the model's part and speech synthesis's part (the economy of a report). */
  llmUsd: number;
  ttsUsd: number;
  cacheHits: number;
  /** The tier's full counters (see docs/dialogue.md), null without a tier. */
  dialogue: DialogueCounters | null;
  /** Where the lines come from (a model, the demo lines, none): the dashboard shows it by the dialogue switch. */
  linesFrom: LinesFrom;
}

export interface Sidecar {
  readonly url: string;
  readonly port: number;
  readonly evaluator: Evaluator;
  readonly ticks: TickHandler;
  /** The dialogue tier, when one was configured. */
  readonly dialogue: DialogueTier | null;
  /** The brain state file in use, if any. */
  readonly stateFile: string | null;
  status(): SidecarStatus;
  /** Counters since the last call (then zeroed), brains and dialogue merged. */
  drainTelemetry(): Promise<SidecarTelemetry>;
  /**
   * The live map's sample: characters the game still ticks, with positions, at most `max`
   * (spread evenly over the roster, ordered by agent id, when there are more).
   */
  mapSample(max: number): Promise<MapSurvivor[]>;
  /** Writes the state file now (no-op without one). */
  saveState(): Promise<void>;
  /** Stops accepting, lets in-flight ticks finish, then stops the config source and the workers. */
  close(): Promise<void>;
  /** Every route the sidecar answers (pattern and methods). */
  routes(): { pattern: string; methods: string[] }[];
}

/** Registers /health, /tick and /ticks on a server (kept apart so the routes can join another server). */
export function sidecarRoutes(server: HttpServer, ticks: TickHandler, maxBody = TICK_MAX_BODY): HttpServer {
  server.get('/health', () => text(200, 'ok'), { headers: [] });
  mountTick(server, ticks, maxBody);
  mountTicks(server, ticks);
  return server;
}

/** The sidecar's server: with a token, every route with a body (the voice routes; the tick routes check it themselves) checks it before reading the body. */
function sidecarServer(options: SidecarOptions, logger: Logger, gate: BearerGate | null): HttpServer {
  return new HttpServer({
    logger,
    observe: options.accessLog ?? null,
    errorsParam: true,
    ...(gate ? { credentials: (req) => gate.checkRequest(req) } : {}),
    ...(options.connections ? { connections: options.connections } : {}),
    ...(options.bodyBudget !== undefined ? { bodyBudget: options.bodyBudget } : {}),
  });
}

/** A telemetry drain: the brains' counters with the dialogue tier's (drained here), the roster of characters still ticked. */
function sidecarTelemetry(brains: BrainTelemetry, tier: DialogueTier | null, players: PlayerTracker, recent: RecentAgents): SidecarTelemetry {
  const d = tier?.drainCounters() ?? null;
  const events = mergeEvents({}, brains.events);
  if (d) {
    events.spoke = d.spoke;
    events.heard = d.heard;
  }
  return {
    events,
    // Only characters the game still ticks: the brains remember the others for an hour.
    roster: brains.roster.filter((s) => recent.has(s.agent)),
    agents: brains.agents,
    playersOnline: players.count(),
    linesSpoken: d?.spoke ?? 0,
    llmTokens: d?.llmTokens ?? 0,
    ttsCharacters: d?.ttsCharacters ?? 0,
    spendUsd: d?.spendUsd ?? 0,
    llmUsd: d?.llmUsd ?? 0,
    ttsUsd: d?.ttsUsd ?? 0,
    cacheHits: d?.cacheHits ?? 0,
    dialogue: d,
    linesFrom: tier?.linesFrom ?? { source: 'none' },
  };
}

/** GET /status and /metrics, the game flags' OFREP routes, and the voice routes when a dialogue tier runs. */
function mountServiceRoutes(
  server: HttpServer,
  options: SidecarOptions,
  parts: { gate: BearerGate | null; status: () => SidecarStatus; registry: Registry; flags: FlagSet; tier: DialogueTier | null; logger: Logger },
): void {
  const { gate, tier, logger } = parts;
  mountStatus(server, gate, parts.status, options.statusExtras ?? (() => ({})));
  options.metricsExtras?.(parts.registry);
  mountMetrics(server, gate, parts.registry);
  mountOfrep(server, gate, parts.flags, { serverId: options.serverId ?? null, ...(options.now ? { now: options.now } : {}) });
  if (tier) mountVoiceRoutes(server, tier, { authorize: (req) => gate?.checkRequest(req), logger });
}

/** Stops accepting, lets in-flight ticks finish, runs `beforeStop`, then stops everything else, the brains last. */
async function stopSidecar(
  server: HttpServer,
  options: SidecarOptions,
  logger: Logger,
  parts: { players: PlayerTracker; recent: RecentAgents; keeper: StateKeeper | null; tier: DialogueTier | null; ev: Evaluator },
): Promise<void> {
  await server.close();
  await options.beforeStop?.().catch((err: unknown) => logger.error('shutdown hook failed', { error: String(err) }));
  parts.players.stop();
  parts.recent.stop();
  await options.source.stop();
  await parts.keeper?.close();
  await parts.tier?.close();
  await parts.ev.close();
}

export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const logger = options.logger ?? silentLogger;
  const gate = options.token ? new BearerGate(options.token) : null;
  let evaluator: Evaluator | null = null;
  let tier: DialogueTier | null = null;
  let flags: FlagSet | null = null;
  const first = await options.source.start((bundle) => {
    flags?.set(bundle);
    tier?.setBundle(bundle);
    evaluator?.setBundle(bundle).then(
      () => logger.info('bundle reached every brain', { version: bundle.version }),
      (err: unknown) => logger.error('bundle could not be applied', { version: bundle.version, error: String(err) }),
    );
  });
  flags = new FlagSet(first);
  const ev = (evaluator = createEvaluator(first, options.workers, options.maxAgents === undefined ? {} : { maxAgents: options.maxAgents }));
  if (options.dialogue) tier = createDialogueTier({ ...options.dialogue, bundle: first, logger });
  const wiring = tier ? new DialogueWiring(tier, (agent, time) => ev.persona(agent, time)) : null;
  const players = new PlayerTracker(options.playersWindowMs);
  const recent = new RecentAgents(options.playersWindowMs);
  const ticks = new TickHandler(ev, {
    gate,
    dialogue: wiring,
    observe: (r) => {
      players.observe(r);
      recent.add(r.snapshot.agent);
    },
  });
  const server = sidecarRoutes(sidecarServer(options, logger, gate), ticks, options.maxBody);
  let agents: number | null = null;
  const status = (): SidecarStatus => ({
    config: options.source.status(),
    evaluator: { mode: ev.mode, workers: ev.workers },
    ticks: { ...ticks.counters },
    latency: ticks.latency.summary(),
    agents: ev.liveAgents ?? agents,
    dialogue: tier?.status() ?? null,
    stateFile: options.stateFile ?? null,
  });
  const registry = sidecarRegistry(ticks, ev, options.source, () => agents);
  mountServiceRoutes(server, options, { gate, status, registry, flags, tier, logger });
  const keeper = options.stateFile ? new StateKeeper(options.stateFile, ev, logger, () => ticks.counters.ok) : null;
  let port: number;
  try {
    await keeper?.restore();
    port = await server.listen(options.host, options.port);
  } catch (err) {
    await options.source.stop();
    await tier?.close();
    await ev.close();
    throw err;
  }
  keeper?.start(options.stateEveryMs ?? 30_000);
  players.start();
  recent.start();
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    port,
    evaluator: ev,
    ticks,
    dialogue: tier,
    stateFile: options.stateFile ?? null,
    drainTelemetry: async () => {
      const brains = await ev.drain();
      agents = brains.agents;
      return sidecarTelemetry(brains, tier, players, recent);
    },
    mapSample: async (max) => {
      const rows = (await ev.mapRoster()).filter((s) => recent.has(s.agent));
      return spread(rows, max);
    },
    saveState: () => keeper?.save() ?? Promise.resolve(),
    status,
    routes: () => server.routes(),
    close: () => (closing ??= stopSidecar(server, options, logger, { players, recent, keeper, tier, ev })),
  };
}

/** At most `max` of `rows`, taken at even steps so a large roster is sampled across, not cut at one end. */
export function spread<T>(rows: readonly T[], max: number): T[] {
  if (rows.length <= max) return [...rows];
  if (max <= 0) return [];
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(rows[Math.floor((i * rows.length) / max)]!);
  return out;
}
