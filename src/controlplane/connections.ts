import type { ServerId } from './types.js';

/** A sidecar counts as connected while its last pull or report is at most this old (2.5 default telemetry intervals). */
export const CONNECTED_WITHIN_MS = 150_000;

/** Longest User-Agent kept for a server (the rest is cut): it is shown, never parsed. */
export const USER_AGENT_MAX = 120;

/** The last config pull a sidecar made, as this process served it. */
export interface PullSeen {
  /** Epoch ms. */
  at: number;
  /** The bundle version the pull left the sidecar with (served on a 200, confirmed by a 304). */
  version: number;
  /** The sidecar's User-Agent (`brainstem-sidecar/0.1.0`), '' when it sent none. */
  userAgent: string;
  /** When the User-Agent was last read (epoch ms). */
  agentAt: number;
}

/** How often (ms) a server's pulls read the User-Agent. */
export const AGENT_EVERY_MS = 1000;

/**
 * The last pull of each server, in memory: a pull is the hottest control-plane request, so it
 * writes nothing to storage; one record per server is updated in place. With several replicas
 * each knows the pulls it served; the last report (stored) is seen by all.
 */
export class SidecarPulls {
  private readonly byServer = new Map<ServerId, PullSeen>();

  /**
   * Records a pull. `userAgent` null means it was not read (see agentDue): the one recorded
   * stays. Undefined means the request had none.
   */
  pulled(serverId: ServerId, version: number, userAgent: string | undefined | null, at: number): void {
    const seen = this.byServer.get(serverId);
    if (userAgent === null) {
      if (seen === undefined) this.byServer.set(serverId, { at, version, userAgent: '', agentAt: at });
      else {
        seen.at = at;
        seen.version = version;
      }
      return;
    }
    const agent = userAgent === undefined ? '' : userAgent.length > USER_AGENT_MAX ? userAgent.slice(0, USER_AGENT_MAX) : userAgent;
    if (seen === undefined) this.byServer.set(serverId, { at, version, userAgent: agent, agentAt: at });
    else {
      seen.at = at;
      seen.version = version;
      seen.agentAt = at;
      if (seen.userAgent !== agent) seen.userAgent = agent;
    }
  }

  /**
   * Whether a pull of `serverId` should read its User-Agent: at most once a second per server.
   * It is shown, never used, and reading a header off uWS is a native call the hottest
   * request would otherwise pay every time.
   */
  agentDue(serverId: ServerId, now: number): boolean {
    const seen = this.byServer.get(serverId);
    return seen === undefined || now - seen.agentAt >= AGENT_EVERY_MS;
  }

  get(serverId: ServerId): PullSeen | undefined {
    return this.byServer.get(serverId);
  }
}
