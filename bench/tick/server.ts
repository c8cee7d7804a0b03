/**
 * A server under test, run as its own process so the benchmark can pin it to one core:
 *   node dist/bench/tick/server.js <kind> [workers] [policy]
 * kinds: sidecar (the real service), node-http (the same tick handler on node:http),
 * uws-bare (uWebSockets.js reading the body and answering a constant), uws-parse (the same, after
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

function ready(port: number): void {
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}

async function bareUws(parse: boolean): Promise<() => Promise<void>> {
  const app = uWS.App();
  app.post('/tick', (res, _req) => {
    let aborted = false;
    const chunks: Buffer[] = [];
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((ab, isLast) => {
      chunks.push(Buffer.from(ab.slice(0)));
      if (!isLast || aborted) return;
      const body = Buffer.concat(chunks);
      if (parse) JSON.parse(body.toString('utf8'));
      res.cork(() => {
        res.writeHeader('content-type', 'application/json').end(CONSTANT_JSON);
      });
    });
  });
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
