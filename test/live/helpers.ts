import type { Logger } from '../../src/log.js';
import { startLinkedSidecar, type ControlPlaneLinkOptions, type LinkedSidecar } from '../../src/sidecar/link/control-plane-link.js';
import { serverWithKey, type Sidecar as KeyedServer } from '../controlplane/helpers.js';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';

export interface LogLine {
  level: 'info' | 'warn' | 'error' | 'debug';
  message: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps every line and lets a test wait for the first line (from now on, or already seen) that matches. */
export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];
  private waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];

  private add(level: LogLine['level'], message: string, fields: Record<string, unknown> = {}): void {
    const line = { level, message, fields };
    this.lines.push(line);
    this.waiters = this.waiters.filter((w) => {
      if (!w.match(line)) return true;
      w.resolve(line);
      return false;
    });
  }
  info(m: string, f?: Record<string, unknown>): void {
    this.add('info', m, f);
  }
  warn(m: string, f?: Record<string, unknown>): void {
    this.add('warn', m, f);
  }
  error(m: string, f?: Record<string, unknown>): void {
    this.add('error', m, f);
  }
  debug(m: string, f?: Record<string, unknown>): void {
    this.add('debug', m, f);
  }

  /** The next line from now on that matches. */
  next(match: (l: LogLine) => boolean): Promise<LogLine> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** A line already seen that matches, else the next one. */
  seen(match: (l: LogLine) => boolean): Promise<LogLine> {
    const found = this.lines.find(match);
    return found ? Promise.resolve(found) : this.next(match);
  }
}

export const applied = (version: number) => (l: LogLine) => l.message === 'bundle applied from the control plane' && l.fields.version === version;

export interface Stack {
  cp: TestServer;
  token: string;
  server: KeyedServer;
  dir: { path: string; dispose(): void };
  start(link?: Partial<ControlPlaneLinkOptions>, logger?: RecordingLogger): Promise<LinkedSidecar & { logger: RecordingLogger }>;
  /** Publishes an edit of the current bundle through the dashboard route; resolves with the new version. */
  publish(edit: (bundle: any) => void): Promise<number>;
  stop(): Promise<void>;
}

/** A control plane with a tenant, a server and its key, and a way to start sidecars on it. */
export async function stack(options: Parameters<typeof startTestServer>[0] = {}): Promise<Stack> {
  const cp = await startTestServer(options);
  const { token } = await tenantSession(cp);
  const server = await serverWithKey(cp, token);
  const dir = tempDir();
  const started: LinkedSidecar[] = [];
  return {
    cp,
    token,
    server,
    dir,
    async start(link = {}, logger = new RecordingLogger()) {
      const linked = await startLinkedSidecar(
        { url: cp.url, serverId: String(server.serverId), serverKey: server.key, stateDir: dir.path, pollMs: 3_600_000, telemetryMs: 3_600_000, ...link },
        { host: '127.0.0.1', port: 0, workers: 0, logger },
      );
      started.push(linked);
      return Object.assign(linked, { logger });
    },
    async publish(edit) {
      const current = await cp.call('GET', `/v1/servers/${server.serverId}/config`, { token });
      const bundle = current.body;
      edit(bundle);
      const res = await cp.call('PUT', `/v1/servers/${server.serverId}/config`, { token, body: bundle });
      if (res.status !== 200) throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.version as number;
    },
    async stop() {
      for (const s of started) await s.sidecar.close();
      await cp.stop();
      dir.dispose();
    },
  };
}
