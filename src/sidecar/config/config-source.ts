import type { ConfigBundle } from '../../../brain/index.js';

/**
 * Where the applied bundle came from: a self-hosted directory, a control-plane pull, the
 * control-plane source's on-disk copy of its last good pull (control plane unreachable at
 * start), or the built-in defaults.
 */
export type ConfigOrigin = 'bundle-dir' | 'control-plane' | 'disk-cache' | 'defaults';

/** What a config source reports: the version it last applied and where it came from. */
export interface ConfigStatus {
  version: number;
  source: ConfigOrigin;
  /** The bundle directory or the control-plane URL; null for the defaults. */
  location: string | null;
  /**
   * Why the source could not bring the newest bundle: a refused bundle, or (control plane) a
   * pull that failed. Cleared by the next pull or bundle that succeeds.
   */
  lastError: string | null;
  /** Since when lastError has held (ISO 8601, the first failure of the run), null without one. */
  lastErrorSince: string | null;
}

/**
 * Where the sidecar's configuration comes from (a bundle directory, the built-in defaults, a
 * control plane). start() resolves with the first bundle; later bundles arrive through
 * onBundle, only when their version differs from the one applied.
 */
export interface ConfigSource {
  start(onBundle: (bundle: ConfigBundle) => void): Promise<ConfigBundle>;
  stop(): Promise<void>;
  status(): ConfigStatus;
}
