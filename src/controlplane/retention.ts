import type { ControlPlaneStore } from './store.js';

const DAY_MS = 24 * 3_600_000;
/** How often (ms) old raw reports are looked for. */
export const PRUNE_EVERY_MS = 10 * 60_000;
/** Reports deleted per pass, so a pass is short even on a large backlog (the next report runs another). */
export const PRUNE_BATCH = 5_000;

/**
 * Raw telemetry reports are kept `days` days; the daily rollups they were folded into are
 * kept forever, so usage, overview and billing figures never change when reports go. Pruning
 * rides on telemetry ingest (at most once per PRUNE_EVERY_MS, sooner while a backlog
 * remains): a control plane that receives no reports stores nothing new either.
 */
export class ReportRetention {
  private nextAt = -Infinity;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: ControlPlaneStore,
    private readonly days: number,
    private readonly now: () => number,
  ) {}

  /** Prunes when a pass is due and resolves when it is done; nothing (no promise to await) when none is due, as on almost every report. */
  maybePrune(): void | Promise<void> {
    const now = this.now();
    if (now < this.nextAt) return;
    return (this.running ??= this.prune(now).finally(() => (this.running = null)));
  }

  private async prune(now: number): Promise<void> {
    const deleted = await this.store.pruneReports(now - this.days * DAY_MS, PRUNE_BATCH);
    this.nextAt = deleted === PRUNE_BATCH ? now : now + PRUNE_EVERY_MS;
  }
}
