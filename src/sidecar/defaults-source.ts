import { DEFAULT_BUNDLE, type ConfigBundle } from '../../brain/index.js';
import type { ConfigSource, ConfigStatus } from './config-source.js';

/** The built-in bundle, used when the sidecar is given no source; it never changes. */
export class DefaultsSource implements ConfigSource {
  async start(): Promise<ConfigBundle> {
    return DEFAULT_BUNDLE;
  }

  async stop(): Promise<void> {}

  status(): ConfigStatus {
    return { version: DEFAULT_BUNDLE.version, source: 'defaults', location: null, lastError: null };
  }
}
