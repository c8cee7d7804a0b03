import { DEFAULT_BUNDLE, type ConfigBundle } from '../../../brain/index.js';
import type { ConfigSource, ConfigStatus } from './config-source.js';

/**
 * The built-in bundle, used when the sidecar is given no source (or one fixed bundle, as the
 * benchmarks give it); it never changes.
 */
export class DefaultsSource implements ConfigSource {
  constructor(private readonly bundle: ConfigBundle = DEFAULT_BUNDLE) {}

  async start(): Promise<ConfigBundle> {
    return this.bundle;
  }

  async stop(): Promise<void> {}

  status(): ConfigStatus {
    return { version: this.bundle.version, source: 'defaults', location: null, lastError: null, lastErrorSince: null };
  }
}
