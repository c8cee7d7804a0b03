/**
 * A server under test, run as its own process so the benchmark can pin it to one core:
 *   node dist/bench/tick/server.js <kind> [workers] [policy]
 * kinds: sidecar (the real service), node-http (the same tick handler on node:http),
 * uws-bare (uWebSockets.js reading the body and answering a constant; on /ticks a constant
 * reply of BARE_BATCH_REPLY agents, about a real 100-agent reply's size), uws-parse (the same, after
 * JSON.parse of the body: what decoding a tick alone costs), sidecar-dialogue (the
 * sidecar with the dialogue tier on, its model at BENCH_LLM_BASE_URL). policy (brain kinds):
 * default (the built-in bundle), all (every policy key on), none (every key off). Prints one JSON line
 * {"port": N} once listening; on SIGTERM prints {"telemetry": ...} (sidecar kinds) and stops.
 */
import { createServer, type IncomingMessage } from 'node:http';
import uWS from 'uWebSockets.js';
import type { ConfigBundle } from '../../brain/index.js';
import { HttpError } from '../../src/http/errors.js';
import type { Request } from '../../src/http/server.js';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { createEvaluator } from '../../src/sidecar/tick/pool.js';
import { startSidecar } from '../../src/sidecar/service.js';
import { TICK_MAX_BODY, TickHandler } from '../../src/sidecar/tick/handler.js';
import { parseBrainPolicy, policyBundle, type BrainPolicy } from './policy.js';

export type ServerKind = 'sidecar' | 'sidecar-dialogue' | 'node-http' | 'uws-bare' | 'uws-parse';

const CONSTANT_JSON = JSON.stringify({ agent: 1, posture: 'standing', intents: [{ kind: 'Idle', reason: 'none' }] });
/** Agents in the bare server's constant /ticks reply. */
const BARE_BATCH_REPLY = 100;
// Shaped like the sidecar's typical batch element, so the reply is about a real one's size.
const BATCH_ELEMENT = JSON.stringify({
  agent: 1001,
  posture: 'standing',
  intents: [
    { kind: 'Face', yaw_deg: 23.34 },
    { kind: 'MoveTo', to: { x: 7074.11, y: 9.6, z: 8335.65 }, speed: 'jog' },
  ],
});
const CONSTANT_BATCH_JSON = `[${Array.from({ length: BARE_BATCH_REPLY }, () => BATCH_ELEMENT).join(',')}]`;

function ready(port: number): void {
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}

async function bareUws(parse: boolean): Promise<() => Promise<void>> {
  const app = uWS.App();
  // Each body is copied once, into a buffer taken from a free list and given back once read
  // (bodies of several connections can arrive interleaved): the least any server that reads a
  // body after its last chunk can do. A buffer per body cost measurably more here (the
  // allocator gives the pages back and faults them in again).
  const free: Buffer[] = [];
  const route = (reply: string) => (res: uWS.HttpResponse, _req: uWS.HttpRequest) => {
    let body: Buffer | null = null;
    let at = 0;
    const release = (): void => {
      if (body !== null) free.push(body);
      body = null;
    };
    res.onAborted(release);
    res.onData((ab, isLast) => {
      const chunk = new Uint8Array(ab);
      body ??= free.pop() ?? Buffer.allocUnsafeSlow(1 << 17);
      if (at + chunk.length > body.length) {
        const grown = Buffer.allocUnsafeSlow(2 * (at + chunk.length));
        body.copy(grown, 0, 0, at);
        body = grown;
      }
      body.set(chunk, at);
      at += chunk.length;
      if (!isLast) return;
      const text = parse ? body.toString('utf8', 0, at) : '';
      release();
      if (parse) JSON.parse(text);
      res.cork(() => {
        res.writeHeader('content-type', 'application/json').end(reply);
      });
    });
  };
  app.post('/tick', route(CONSTANT_JSON));
  app.post('/ticks', route(CONSTANT_BATCH_JSON));
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen failed')))),
  );
  ready(uWS.us_socket_local_port(socket as never));
  return async () => uWS.us_listen_socket_close(socket);
}

function requestOf(msg: IncomingMessage, body: Buffer): Request {
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'content-length', 'authorization']) {
    const v = msg.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  const path = msg.url ?? '/';
  return {
    method: 'POST',
    path,
    query: '',
    target: path,
    params: {},
    headers,
    remoteAddress: '',
    body,
    stream: null,
    aborted: false,
    scope: null,
    searchParams: () => new URLSearchParams(),
  };
}

async function nodeHttp(workers: number, bundle: ConfigBundle): Promise<() => Promise<void>> {
  const evaluator = createEvaluator(bundle, workers);
  const ticks = new TickHandler(evaluator);
  const server = createServer((msg, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    msg.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= TICK_MAX_BODY) chunks.push(c);
    });
    msg.on('end', () => {
      const fail = (err: unknown): void => {
        const e = err instanceof HttpError ? err : new HttpError('internal');
        res.writeHead(e.status, { 'content-type': 'application/json' }).end(JSON.stringify(e.toBody()));
      };
      if (msg.method !== 'POST' || msg.url !== '/tick') return fail(new HttpError('not_found'));
      if (size > TICK_MAX_BODY) return fail(new HttpError('payload_too_large'));
      try {
        const out = ticks.handle(requestOf(msg, Buffer.concat(chunks, size)));
        const send = (reply: Awaited<typeof out>): void => {
          if ('stream' in reply) throw new Error('unexpected stream reply');
          res.writeHead(reply.status, reply.headers).end(reply.body);
        };
        if (out instanceof Promise) out.then(send, fail);
        else send(out);
      } catch (err) {
        fail(err);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  ready(typeof addr === 'object' && addr ? addr.port : 0);
  return async () => {
    server.closeAllConnections();
    server.close();
    await evaluator.close();
  };
}

async function sidecar(workers: number, dialogue: boolean, policy: BrainPolicy): Promise<() => Promise<void>> {
  const env = {
    ...process.env,
    SERVICE_LLM_BASE_URL: process.env.BENCH_LLM_BASE_URL ?? '',
    SERVICE_LLM_MODEL: 'fake-model',
    SERVICE_LLM_KEY: 'sk-bench',
    SERVICE_TTS_ENGINE: 'off',
  };
  const source = new DefaultsSource(policyBundle(policy));
  const s = await startSidecar({ host: '127.0.0.1', port: 0, source, workers, dialogue: dialogue ? { env } : null });
  ready(s.port);
  return async () => {
    const telemetry = await s.drainTelemetry();
    process.stdout.write(`${JSON.stringify({ telemetry: { ...telemetry, roster: telemetry.roster.length } })}\n`);
    await s.close();
  };
}

const kind = process.argv[2] as ServerKind;
const workers = Number(process.argv[3] ?? 0);
const policy = parseBrainPolicy(process.argv[4]);
const stop =
  kind === 'uws-bare' || kind === 'uws-parse'
    ? await bareUws(kind === 'uws-parse')
    : kind === 'node-http'
      ? await nodeHttp(workers, policyBundle(policy))
      : kind === 'sidecar' || kind === 'sidecar-dialogue'
        ? await sidecar(workers, kind === 'sidecar-dialogue', policy)
        : null;
if (!stop) {
  process.stderr.write(`unknown server kind ${kind}\n`);
  process.exit(2);
}
process.once('SIGTERM', () => {
  void stop().then(() => process.exit(0));
});
