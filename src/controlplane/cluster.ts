import type { Broadcast } from '../store/broadcast.js';
import type { TenantId } from '../identity/types.js';
import type { HeadCache } from './heads.js';
import type { BundleSigner } from './bundle-signer.js';
import type { ConfigStreams } from './config-stream.js';
import type { ServerKeyAuth } from './server-key-auth.js';
import type { ServerId, ServerKeyId } from './types.js';
import type { Logger } from '../log.js';

/** The channel on which control-plane replicas tell each other what changed. */
export const CONTROLPLANE_CHANNEL = 'brainstem_controlplane';

/** The month's line counts a tenant change must drop (the LineQuota, by what this needs of it). */
interface QuotaView {
  forget(tenantId: TenantId): void;
  forgetAll(): void;
}

interface Views {
  heads: HeadCache;
  signer: BundleSigner;
  streams: ConfigStreams;
  keyAuth: ServerKeyAuth;
  quota: QuotaView;
}

/** A change that every replica's memory must follow. */
export type ControlPlaneEvent =
  | { kind: 'head'; serverId: ServerId; version: number }
  | { kind: 'key_revoked'; tokenHash: string; keyId?: ServerKeyId }
  | { kind: 'tenant'; tenantId: TenantId }
  /** The bundle-signing keys changed (`brainstem keys rotate`). */
  | { kind: 'keys' };

/**
 * Keeps this replica's in-memory views (the heads the 304 path answers from, resolved keys,
 * tenant status, the line quota's counts) in step with the others: each change is applied
 * here at once and broadcast; a change heard from another replica reloads what it touches.
 * After a lost connection every cached head is reloaded and every resolved key and tenant
 * status dropped, since messages may have been missed meanwhile.
 */
export class ControlPlaneSync {
  private views: Views | null = null;

  constructor(
    private readonly broadcast: Broadcast | null,
    private readonly logger: Logger,
  ) {}

  /** Starts applying other replicas' changes to these views (made after this object, since they announce through it). */
  follow(views: Views): void {
    this.views = views;
    this.broadcast?.listen(
      CONTROLPLANE_CHANNEL,
      (payload) => this.heard(payload),
      () => this.resync(),
    );
  }

  /**
   * Tells the other replicas (a single process has none: nothing is sent). Awaited before the
   * change is answered, so a client that goes on to another replica finds it there; never
   * rejects (a failed send is logged: the change itself is stored).
   */
  async announce(event: ControlPlaneEvent): Promise<void> {
    if (!this.broadcast) return;
    try {
      await this.broadcast.send(CONTROLPLANE_CHANNEL, JSON.stringify(event));
    } catch (err) {
      this.logger.error('control plane: could not broadcast a change', { event: event.kind, error: String(err) });
    }
  }

  private heard(payload: string): void {
    const views = this.views;
    if (!views) return;
    let event: ControlPlaneEvent;
    try {
      event = JSON.parse(payload) as ControlPlaneEvent;
    } catch {
      return;
    }
    const failed = (err: unknown) =>
      this.logger.error('control plane: could not apply a change from another replica', { event: event.kind, error: String(err) });
    switch (event.kind) {
      case 'head':
        // Dropped at once, so a pull arriving before the reload reads the store, never the old head.
        views.heads.forget(event.serverId, event.version);
        views.heads.reload(event.serverId).catch(failed);
        return;
      case 'key_revoked':
        views.keyAuth.keyRevoked(event.tokenHash);
        if (event.keyId !== undefined) views.streams.closeKey(event.keyId);
        return;
      case 'tenant':
        // Only forgotten here: the replica that made the change applies its consequences (a
        // quota hold published or lifted) once, for all.
        views.keyAuth.tenantChanged(event.tenantId);
        views.quota.forget(event.tenantId);
        views.streams.closeTenant(event.tenantId);
        return;
      case 'keys':
        views.signer.refresh().catch(failed);
        return;
      default: {
        const _: never = event;
        return _;
      }
    }
  }

  private resync(): void {
    const views = this.views;
    if (!views) return;
    views.keyAuth.forgetAll();
    views.quota.forgetAll();
    views.signer.refresh().catch((err) => this.logger.error('control plane: could not read the bundle keys after reconnecting', { error: String(err) }));
    views.heads.reloadAll().catch((err) => this.logger.error('control plane: could not reload heads after reconnecting', { error: String(err) }));
  }
}
