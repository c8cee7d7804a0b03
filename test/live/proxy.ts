import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface PulledReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A real HTTP proxy between a sidecar and the control plane, standing for an attacker on the
 * path (or a compromised mirror): it records every bundle pulled, can answer pulls with
 * something else (`rewrite`), and can hold the push stream open while withholding its events.
 */
export class AttackerProxy {
  readonly pulls: PulledReply[] = [];
  /** Answers a pull instead of the control plane's reply (which it gets to see); null forwards it. */
  rewrite: ((upstream: PulledReply) => PulledReply) | null = null;
  /** Holds /v1/config/stream open with heartbeats only, never an event (a freeze). */
  withholdStream = false;
  /** Answers everything 503 (the control plane unreachable). */
  down = false;
  private server: Server | null = null;
  private readonly held: ServerResponse[] = [];
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => res.destroy());
    }).listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const r of this.held) r.destroy();
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.down) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"unavailable","message":"down"}}');
      return;
    }
    const url = req.url ?? '/';
    if (url.startsWith('/v1/config/stream') && this.withholdStream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': heartbeat\n\n');
      this.held.push(res);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const up = await fetch(this.target + url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const upHeaders: Record<string, string> = {};
    up.headers.forEach((v, k) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) upHeaders[k] = v;
    });
    if ((up.headers.get('content-type') ?? '').includes('event-stream')) {
      res.writeHead(up.status, upHeaders);
      for await (const c of up.body as unknown as AsyncIterable<Uint8Array>) res.write(c);
      res.end();
      return;
    }
    let reply: PulledReply = { status: up.status, headers: upHeaders, body: await up.text() };
    if (url.startsWith('/v1/config?')) {
      if (reply.status === 200) this.pulls.push(reply);
      if (this.rewrite) reply = this.rewrite(reply);
    }
    res.writeHead(reply.status, reply.headers).end(reply.status === 304 ? undefined : reply.body);
  }
}
