import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ConfigBundle, Problem } from '../../../brain/index.js';
import { BUNDLE_FILE } from '../../bundle-dir.js';
import { loadBundleDir, type BundleLoad } from '../../bundles.js';
import { silentLogger, type Logger } from '../../log.js';
import type { ConfigSource, ConfigStatus } from './config-source.js';
import type { BundleTrust } from './bundle-trust.js';
import { ANY_SERVER, BUNDLE_SIGNATURE_FILE } from '../../signing/bundle.js';

/** Largest bundle.sig read. */
const MAX_SIG_BYTES = 4096;

/** A signed directory's signature, or why there is none to check. */
async function readSignature(dir: string): Promise<{ keyId: string | null; signature: string | null }> {
  try {
    const text = await readFile(join(dir, BUNDLE_SIGNATURE_FILE), 'utf8');
    if (text.length > MAX_SIG_BYTES) return { keyId: null, signature: null };
    const doc = JSON.parse(text) as { keyId?: unknown; signature?: unknown };
    return { keyId: typeof doc.keyId === 'string' ? doc.keyId : null, signature: typeof doc.signature === 'string' ? doc.signature : null };
  } catch {
    return { keyId: null, signature: null };
  }
}

export type ReloadOutcome = { kind: 'applied'; version: number } | { kind: 'unchanged'; version: number } | { kind: 'refused'; problems: Problem[] };

export interface BundleDirOptions {
  logger?: Logger;
  /** Quiet time after a change before the directory is read (editors write in several steps). */
  debounceMs?: number;
  /** Interval of the stat fallback, for file systems where fs.watch misses changes; 0 turns it off. */
  pollMs?: number;
  /** Wall clock in ms, for lastErrorSince (Date.now). */
  now?: () => number;
  /**
   * With a pinned key (`--bundle-key`): bundle.json must carry a valid bundle.sig by that key
   * (`brainstem bundle sign`), and a lower version than one applied is refused.
   */
  trust?: BundleTrust;
}

/**
 * A self-hosted bundle directory: loaded at start, then watched (fs.watch plus a periodic
 * stat of bundle.json as a fallback). A changed, valid bundle with a new version is applied;
 * an invalid one is refused with a log line and the last good bundle stays in force.
 */
export class BundleDirSource implements ConfigSource {
  readonly dir: string;
  private readonly logger: Logger;
  private readonly debounceMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  private current: ConfigBundle | null = null;
  private lastError: string | null = null;
  private lastErrorSince: string | null = null;
  private onBundle: ((bundle: ConfigBundle) => void) | null = null;
  private watcher: FSWatcher | null = null;
  private poller: NodeJS.Timeout | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private lastStat = '';
  /** Reloads run one at a time; a change during a reload asks for one more afterwards. */
  private running: Promise<ReloadOutcome> | null = null;
  private again = false;

  constructor(dir: string, options: BundleDirOptions = {}) {
    this.dir = resolve(dir);
    this.logger = options.logger ?? silentLogger;
    this.debounceMs = options.debounceMs ?? 100;
    this.pollMs = options.pollMs ?? 2000;
    this.now = options.now ?? Date.now;
    this.trust = options.trust ?? null;
  }

  private readonly trust: BundleTrust | null;

  /** The load, with the signature and version checks when a key is pinned. */
  private async read(): Promise<BundleLoad> {
    const result = await loadBundleDir(this.dir);
    if (!result.ok || !this.trust) return result;
    const { keyId, signature } = await readSignature(this.dir);
    const verdict = await this.trust.verify(ANY_SERVER, result.text, keyId, signature, false);
    if (!verdict.ok) return { ok: false, problems: [{ path: BUNDLE_SIGNATURE_FILE, message: verdict.reason }] };
    const rollback = this.trust.rollback(result.bundle.version);
    if (rollback) return { ok: false, problems: [{ path: 'version', message: rollback }] };
    await this.trust.applied(result.bundle.version);
    return result;
  }

  async start(onBundle: (bundle: ConfigBundle) => void): Promise<ConfigBundle> {
    await this.trust?.load();
    const first = await this.read();
    if (!first.ok) {
      const reasons = first.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
      throw new Error(`bundle directory ${this.dir} is not valid: ${reasons}`);
    }
    this.current = first.bundle;
    this.onBundle = onBundle;
    this.lastStat = await this.fingerprint();
    try {
      this.watcher = watch(this.dir, { persistent: false }, () => this.schedule());
      this.watcher.on('error', (err) => {
        this.logger.warn('bundle directory watch failed; polling only', { dir: this.dir, error: err.message });
        this.watcher?.close();
        this.watcher = null;
      });
    } catch (err) {
      this.logger.warn('bundle directory cannot be watched; polling only', { dir: this.dir, error: (err as Error).message });
    }
    if (this.pollMs > 0) {
      this.poller = setInterval(() => void this.poll(), this.pollMs);
      this.poller.unref();
    }
    return first.bundle;
  }

  async stop(): Promise<void> {
    this.onBundle = null;
    this.watcher?.close();
    this.watcher = null;
    if (this.poller) clearInterval(this.poller);
    if (this.debounce) clearTimeout(this.debounce);
    this.poller = this.debounce = null;
    await this.running;
  }

  status(): ConfigStatus {
    return { version: this.current?.version ?? 0, source: 'bundle-dir', location: this.dir, lastError: this.lastError, lastErrorSince: this.lastErrorSince };
  }

  /** Reads the directory now and applies its bundle when valid and of a new version. */
  reload(): Promise<ReloadOutcome> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.load().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        void this.reload();
      }
    });
    return this.running;
  }

  private schedule(): void {
    if (!this.onBundle) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.reload();
    }, this.debounceMs);
    this.debounce.unref();
  }

  private async fingerprint(): Promise<string> {
    try {
      const s = await stat(join(this.dir, BUNDLE_FILE));
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  private async poll(): Promise<void> {
    const now = await this.fingerprint();
    if (now === this.lastStat) return;
    this.lastStat = now;
    this.schedule();
  }

  private async load(): Promise<ReloadOutcome> {
    this.lastStat = await this.fingerprint();
    const result = await this.read();
    if (!result.ok) {
      this.lastError = result.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
      this.lastErrorSince ??= new Date(this.now()).toISOString();
      this.logger.warn('bundle refused; keeping the last good one', {
        dir: this.dir,
        version: this.current?.version,
        problems: result.problems,
      });
      return { kind: 'refused', problems: result.problems };
    }
    this.lastError = null;
    this.lastErrorSince = null;
    if (this.current && result.bundle.version === this.current.version) return { kind: 'unchanged', version: result.bundle.version };
    const previous = this.current?.version;
    this.current = result.bundle;
    this.logger.info('bundle applied', { dir: this.dir, version: result.bundle.version, previous });
    this.onBundle?.(result.bundle);
    return { kind: 'applied', version: result.bundle.version };
  }
}
