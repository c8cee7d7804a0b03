import type { ConfigBundle } from '../../brain/index.js';

/** What a config source reports: the version it last applied and where it came from. */
export interface ConfigStatus {
  version: number;
  /** 'defaults', 'dir:/path/to/bundle', or (later) the control-plane URL. */
  source: string;
  /** Why the newest candidate bundle was refused, when it was; cleared by the next applied one. */
  lastError: string | null;
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
