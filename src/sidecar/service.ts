import { HttpServer } from '../http/server.js';
import { text } from '../http/reply.js';
import { silentLogger, type Logger } from '../log.js';
import { BearerGate } from './auth.js';
import type { ConfigSource, ConfigStatus } from './config-source.js';
import type { Evaluator } from './evaluator.js';
import type { LatencySummary } from './histogram.js';
import { createEvaluator } from './pool.js';
import { TICK_HEADERS, TICK_MAX_BODY, TickHandler, type TickCounters } from './tick.js';

export interface SidecarOptions {
  host: string;
  /** 0 picks a free port; the bound one is on the returned Sidecar. */
  port: number;
  source: ConfigSource;
  /** 0 evaluates on the main thread; N > 0 shards agents over N single-thread worker pools. */
  workers: number;
  /** When set, /tick needs `Authorization: Bearer <token>`; /health stays open. */
  token?: string | null;
  /** Largest /tick body in bytes (413 beyond). */
  maxBody?: number;
  /** Most agents each Brain keeps. */
  maxAgents?: number;
  logger?: Logger;
}

export interface SidecarStatus {
  config: ConfigStatus;
  evaluator: { mode: Evaluator['mode']; workers: number };
  ticks: TickCounters;
  latency: LatencySummary;
}

export interface Sidecar {
  readonly url: string;
  readonly port: number;
  readonly evaluator: Evaluator;
  readonly ticks: TickHandler;
  status(): SidecarStatus;
  /** Stops accepting, lets in-flight ticks finish, then stops the config source and the workers. */
  close(): Promise<void>;
}

/** Registers /health and /tick on a server (kept apart so the routes can join another server). */
export function sidecarRoutes(server: HttpServer, ticks: TickHandler, maxBody = TICK_MAX_BODY): HttpServer {
  server.get('/health', () => text(200, 'ok'), { headers: [] });
  server.post('/tick', ticks.handle, { maxBody, headers: TICK_HEADERS });
  return server;
}

export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const logger = options.logger ?? silentLogger;
  const gate = options.token ? new BearerGate(options.token) : null;
  let evaluator: Evaluator | null = null;
  const first = await options.source.start((bundle) => {
    evaluator?.setBundle(bundle).then(
      () => logger.info('bundle reached every brain', { version: bundle.version }),
      (err: unknown) => logger.error('bundle could not be applied', { version: bundle.version, error: String(err) }),
    );
  });
  const ev = (evaluator = createEvaluator(first, options.workers, options.maxAgents === undefined ? {} : { maxAgents: options.maxAgents }));
  const ticks = new TickHandler(ev, { gate });
  const server = sidecarRoutes(new HttpServer({ logger }), ticks, options.maxBody);
  let port: number;
  try {
    port = await server.listen(options.host, options.port);
  } catch (err) {
    await options.source.stop();
    await ev.close();
    throw err;
  }
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    port,
    evaluator: ev,
    ticks,
    status: () => ({
      config: options.source.status(),
      evaluator: { mode: ev.mode, workers: ev.workers },
      ticks: { ...ticks.counters },
      latency: ticks.latency.summary(),
    }),
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await options.source.stop();
        await ev.close();
      })()),
  };
}
