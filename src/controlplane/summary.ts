import type { ControlPlaneContext } from './context.js';
import type { DialogueSource, LatestReport, ServerRecord } from './types.js';
import { CONNECTED_WITHIN_MS } from './connections.js';

/**
 * The sidecar's link as the control plane sees it: `connected` while its last pull or report
 * is at most CONNECTED_WITHIN_MS old, `stale` when it was seen before that, `never` before
 * the first; the pull's fields are those of the last pull this process served.
 */
export interface SidecarConnection {
  state: 'connected' | 'stale' | 'never';
  /**
   * How publishes reach the sidecar: `live` while it holds a config push stream on this
   * replica, `polling` when connected without one (it pulls every 15 s), null otherwise.
   */
  path: 'live' | 'polling' | null;
  lastPullAt: string | null;
  /** The bundle version the sidecar runs, as of its last pull. */
  appliedVersion: number | null;
  lastReportAt: string | null;
  /** The sidecar's User-Agent on its last pull (`brainstem-sidecar/0.1.0`); null when unknown. */
  sidecarVersion: string | null;
  /** Tick latency (ms) as last reported (LatestReport.latencyP50); null when no recent report carried one. */
  latencyMs: { p50: number; p99: number } | null;
  /** Where the sidecar's lines come from, as its reports say (`model` with its name, `demo`, `none`); null before a report said. */
  dialogue: DialogueSource | null;
}

/** ServerSummary: what the dashboard lists per server (fields in docs/controlplane.md). */
export interface ServerSummary {
  id: number;
  name: string;
  createdAt: string;
  configVersion: number;
  /** When the last telemetry report arrived; null before the first. */
  lastSeenAt: string | null;
  botCount: number;
  playersOnline: number;
  activeKeys: number;
  connection: SidecarConnection;
}

export async function serverSummary(ctx: ControlPlaneContext, server: ServerRecord): Promise<ServerSummary> {
  const [head, latest, keys] = await Promise.all([ctx.heads.get(server.id), ctx.store.latestReport(server.id), ctx.store.listServerKeys(server.id)]);
  return {
    id: server.id,
    name: server.name,
    createdAt: server.createdAt,
    configVersion: head?.version ?? 0,
    lastSeenAt: latest ? new Date(latest.receivedAt).toISOString() : null,
    botCount: latest?.botCount ?? 0,
    playersOnline: latest?.playersOnline ?? 0,
    activeKeys: keys.filter((k) => k.revokedAt === null).length,
    connection: connectionOf(ctx, server, latest),
  };
}

function connectionOf(ctx: ControlPlaneContext, server: ServerRecord, latest: LatestReport | null): SidecarConnection {
  const pull = ctx.pulls.get(server.id);
  const lastSeen = Math.max(pull?.at ?? -Infinity, latest?.receivedAt ?? -Infinity);
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const state = lastSeen === -Infinity ? 'never' : ctx.now() - lastSeen <= CONNECTED_WITHIN_MS ? 'connected' : 'stale';
  const live = ctx.streams.count(server.id) > 0;
  return {
    state: live ? 'connected' : state,
    path: live ? 'live' : state === 'connected' ? 'polling' : null,
    lastPullAt: iso(pull?.at),
    appliedVersion: pull?.version ?? null,
    lastReportAt: iso(latest?.receivedAt),
    sidecarVersion: pull?.userAgent || null,
    latencyMs: latest && latest.latencyP50 !== null && latest.latencyP99 !== null ? { p50: latest.latencyP50, p99: latest.latencyP99 } : null,
    dialogue: latest?.dialogue ?? null,
  };
}
