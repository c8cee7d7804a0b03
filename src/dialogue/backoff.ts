import { PluginRequestError } from './supervisor.js';

/** Pause after a full plugin queue: our own congestion, not the model's, so a short one. */
export const QUEUE_FULL_BACKOFF_MS = 1000;
/** The shortest pause after any failure, whatever the plugin's hint. */
export const MIN_BACKOFF_MS = 100;

/** What a failed model call means for the next ones. */
export type ModelFailure = { kind: 'refused'; code: 'bad_request' } | { kind: 'backing_off'; code: string; waitMs: number };

/**
 * The model's back-off on the wall clock: after a failure it is not asked until its hint
 * (`retry_after_ms`), a short pause for a full queue, or `unavailableMs` has passed. A request
 * the plugin refused as bad says nothing about the model and pauses nothing.
 */
export class ModelBackoff {
  private until = 0;

  constructor(
    private readonly now: () => number,
    private readonly unavailableMs: number,
  ) {}

  /** Whether the model may be asked now. */
  available(): boolean {
    return this.now() >= this.until;
  }

  /** Milliseconds until the model is asked again (0 when it may be now). */
  retryInMs(): number {
    return Math.max(0, this.until - this.now());
  }

  /** Records a failed call and says how it was taken. */
  failed(err: unknown): ModelFailure {
    const e = err instanceof PluginRequestError ? err : null;
    if (e?.code === 'bad_request') return { kind: 'refused', code: 'bad_request' };
    const waitMs = e?.retryAfterMs ?? (e?.code === 'queue_full' ? QUEUE_FULL_BACKOFF_MS : this.unavailableMs);
    this.until = Math.max(this.until, this.now() + Math.max(waitMs, MIN_BACKOFF_MS));
    return { kind: 'backing_off', code: e?.code ?? 'internal', waitMs };
  }
}
