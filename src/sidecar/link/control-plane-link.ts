import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../../log.js';
import { ControlPlaneClient } from './control-plane-client.js';
import { ControlPlaneSource } from './control-plane-source.js';
import { startSidecar, type Sidecar, type SidecarOptions } from '../service.js';
import { ensureDir } from '../state/state-dir.js';
import { DEFAULT_BUFFER_CAP, TelemetryBuffer } from './telemetry-buffer.js';
import { TelemetryPusher } from './telemetry-push.js';
import { externalCounter, externalGauge } from '../../http/metrics.js';
import { SIDECAR_METRICS_PREFIX } from '../metrics.js';

export interface ControlPlaneLinkOptions {
  url: string;
  serverId: string;
  serverKey: string;
  stateDir: string;
  /** Config poll interval while the push stream is down, ms (default 15 s). */
  pollMs?: number;
  /** Config poll interval while the push stream is live, ms (default LIVE_POLL_FACTOR × pollMs). */
  livePollMs?: number;
  /** Hold the config push stream open (default true). */
  push?: boolean;
  /** The bundle public key to pin (`--bundle-key`); else the control plane's on first use. */
  bundleKey?: string;
  /** The push stream's idle limit, ms (tests lower it). */
  streamIdleMs?: number;
  /** Telemetry interval, ms (default 60 s). */
  telemetryMs?: number;
  /** Cap of the pull and push back-off, ms (default 5 min). */
  maxBackoffMs?: number;
  /** Longest wait for the first pull at start, ms (default 3 s). */
  startupTimeoutMs?: number;
  /** Reports the on-disk buffer keeps (default 2880: 48 h at 60 s). */
  bufferCap?: number;
  /** How long close() may spend sending the final report (default 2 s). */
  shutdownGraceMs?: number;
  /** Admit an http:// control plane that is not on loopback. */
  insecureHttp?: boolean;
  now?: () => number;
  random?: () => number;
}

export interface LinkedSidecar {
  sidecar: Sidecar;
  source: ControlPlaneSource;
  pusher: TelemetryPusher;
}

/** The pull's tuning the link was given (polls, push stream, bundle key, back-off, start-up wait); unset ones keep the source's defaults. */
function sourceTuning(link: ControlPlaneLinkOptions) {
  return {
    ...(link.pollMs !== undefined ? { pollMs: link.pollMs } : {}),
    ...(link.livePollMs !== undefined ? { livePollMs: link.livePollMs } : {}),
    ...(link.push !== undefined ? { push: link.push } : {}),
    ...(link.bundleKey !== undefined ? { bundleKey: link.bundleKey } : {}),
    ...(link.streamIdleMs !== undefined ? { streamIdleMs: link.streamIdleMs } : {}),
    ...(link.maxBackoffMs !== undefined ? { maxBackoffMs: link.maxBackoffMs } : {}),
    ...(link.startupTimeoutMs !== undefined ? { startupTimeoutMs: link.startupTimeoutMs } : {}),
  };
}

/** The link's counters on GET /metrics: config pulls and telemetry sends by outcome, reports waiting on disk. */
function linkMetrics(registry: Registry, source: ControlPlaneSource, pusher: () => TelemetryPusher | null, buffer: TelemetryBuffer): void {
  const p = SIDECAR_METRICS_PREFIX;
  externalCounter(
    registry,
    `${p}_config_pulls_total`,
    'Config pulls from the control plane, by outcome: ok (a bundle), not_modified (304), unauthorized, error',
    () => ({ ...source.pulls }),
    'outcome',
  );
  externalCounter(
    registry,
    `${p}_telemetry_reports_total`,
    'Telemetry report sends to the control plane, by outcome: ok (202), unauthorized, error',
    () => {
      const { ok, unauthorized, error } = pusher()?.pushes ?? { ok: 0, unauthorized: 0, error: 0 };
      return { ok, unauthorized, error };
    },
    'outcome',
  );
  externalGauge(registry, `${p}_telemetry_buffered`, 'Telemetry reports waiting on disk to be sent', () => buffer.size);
}

/**
 * A sidecar bound to a control plane: config from ControlPlaneSource, telemetry through
 * TelemetryPusher with its on-disk buffer, both signing with one ControlPlaneClient, and
 * their state on GET /status. Closing the sidecar writes (and tries to send) a final report.
 */
export async function startLinkedSidecar(
  link: ControlPlaneLinkOptions,
  sidecarOptions: Omit<SidecarOptions, 'source' | 'statusExtras' | 'beforeStop' | 'metricsExtras'>,
): Promise<LinkedSidecar> {
  const logger: Logger = sidecarOptions.logger ?? silentLogger;
  const now = link.now ?? Date.now;
  const random = link.random ?? Math.random;
  const client = new ControlPlaneClient({
    url: link.url,
    serverId: link.serverId,
    key: link.serverKey,
    now,
    ...(link.insecureHttp ? { insecureHttp: true } : {}),
  });
  await ensureDir(link.stateDir);
  const buffer = new TelemetryBuffer(link.stateDir, link.bufferCap ?? DEFAULT_BUFFER_CAP);
  await buffer.load();
  if (buffer.size > 0) logger.info('telemetry reports left from a previous run will be sent first', { buffered: buffer.size });
  const source = new ControlPlaneSource({ client, stateDir: link.stateDir, logger, now, random, ...sourceTuning(link) });
  let pusher: TelemetryPusher | null = null;
  const sidecar = await startSidecar({
    ...sidecarOptions,
    serverId: link.serverId,
    source,
    statusExtras: () => ({
      controlPlane: {
        url: client.url,
        serverId: client.serverId,
        stateDir: link.stateDir,
        ...source.pullStatus(),
        ...(pusher?.status() ?? { lastPush: null, lastPushError: null, lastPushErrorSince: null, buffered: buffer.size, dropped: buffer.dropped, rejected: 0 }),
      },
    }),
    beforeStop: async () => pusher?.close(link.shutdownGraceMs ?? 2_000),
    metricsExtras: (registry) => linkMetrics(registry, source, () => pusher, buffer),
  });
  pusher = new TelemetryPusher({
    client,
    buffer,
    collect: () => sidecar.drainTelemetry(),
    sampleMap: (max) => sidecar.mapSample(max),
    latency: sidecar.ticks.latency,
    logger,
    now,
    random,
    ...(link.telemetryMs !== undefined ? { intervalMs: link.telemetryMs } : {}),
    ...(link.maxBackoffMs !== undefined ? { maxBackoffMs: link.maxBackoffMs, minBackoffMs: Math.min(1_000, link.maxBackoffMs) } : {}),
  });
  pusher.start();
  return { sidecar, source, pusher };
}
