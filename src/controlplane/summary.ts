import type { ControlPlaneContext } from './context.js';
import type { ServerRecord } from './types.js';

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
  };
}
