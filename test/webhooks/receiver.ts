import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliveryProblem } from './schema-check.js';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
  /** When the request's body had arrived (Date.now()). */
  at: number;
}

export type Responder = (r: Received, index: number) => { status: number; body?: string; headers?: Record<string, string>; holdMs?: number; hang?: boolean };

/**
 * A real HTTP receiver on 127.0.0.1:0 that records every request and answers with `respond`.
 * Every body that carries a delivery's headers is checked against the event catalogue's JSON
 * Schema; close() fails the test if one did not match, so every delivery the suite makes is checked.
 */
export async function startReceiver(
  respond: Responder = () => ({ status: 200, body: 'ok' }),
  /** `schema: false` for tests that put raw bodies straight into the outbox (they test the outbox, not the events). */
  options: { schema?: boolean } = {},
) {
  const received: Received[] = [];
  const invalid: string[] = [];
  const waiters: { ready: () => boolean; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  let responder = respond;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '/', at: Date.now() };
      if (options.schema !== false && req.headers['x-service-delivery']) {
        const problem = deliveryProblem(r.body);
        if (problem) invalid.push(problem);
      }
      const index = received.length;
      received.push(r);
      for (const w of [...waiters])
        if (w.ready()) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      const answer = responder(r, index);
      if (answer.hang) {
        hanging.add(res);
        return;
      }
      const write = () => {
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
      };
      if (answer.holdMs) setTimeout(write, answer.holdMs);
      else write();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    setResponder(r: Responder) {
      responder = r;
    },
    /** Resolves once at least n requests have arrived. */
    waitFor(n: number): Promise<void> {
      return this.waitUntil(() => received.length >= n);
    },
    /** Resolves once the predicate holds, checked on every arriving request. */
    waitUntil(ready: () => boolean): Promise<void> {
      if (ready()) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ ready, resolve }));
    },
    releaseHanging(status = 200) {
      for (const res of hanging) {
        res.writeHead(status);
        res.end();
      }
      hanging.clear();
    },
    /** Delivery bodies that did not match their event's schema. */
    invalid,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (invalid.length > 0) throw new Error(`deliveries that do not match the event catalogue's schema:\n${invalid.join('\n')}`);
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
