import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openDatabase } from '../../src/store/sqlite.js';
import { BackgroundCheckpoints } from '../../src/store/checkpointer.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createSender } from '../../src/net/sender.js';
import { deliveryBody, validateEvent } from '../../src/webhooks/events.js';
import { WebhookService } from '../../src/webhooks/service.js';
import { serviceSignature } from '../../src/signing/webhook.js';
import type { TenantId } from '../../src/identity/types.js';
import { SqliteIdentityStore } from '../../src/identity/sqlite-store.js';
import { hashToken, newToken } from '../../src/identity/tokens.js';
import { startEmbedded } from '../../src/embedded/start.js';
import { SigningKeys } from '../../src/webhooks/keys.js';
import { asymmetricSignature, ed25519PrivateKey, generateEd25519, standardKey, standardSignature } from '../../src/signing/webhook.js';
import { EVENTS_PER_CONVERSATION, RETRY_MS, SCENARIOS, type Scenario } from './scenarios.js';

export interface BenchOptions {
  /** Deliveries per scenario. */
  deliveries: number;
  /** Events for the enqueue measurement. */
  events: number;
  /**
   * Rounds of every scenario (default 1), each scenario run with a raw-POST baseline just before
   * it and one more after the last: each scenario run is compared with the baselines just before
   * and after it.
   */
  rounds?: number;
}

export interface ScenarioResult {
  scenario: string;
  endpoints: number;
  perEndpoint: number;
  concurrency: number;
  ordered: boolean;
  failFirst: number;
  scheme: string;
  deliveries: number;
  /** Attempts made (deliveries plus retries). */
  attempts: number;
  seconds: number;
  deliveriesPerSec: number;
  /** CPU time of the bench process (dispatcher, store, sender) per delivery, ms. */
  cpuMsPerDelivery: number;
  /** Deliveries the receiver accepted before an earlier one of their conversation. */
  outOfOrder: number;
  /** Distinct deliveries the receiver accepted (every one must be). */
  received: number;
  /** WAL pages not yet copied into the SQLite file when the clock started: 0, the fill's pages copied first. */
  walPagesAtStart: number;
  /**
   * Deliveries per second over the raw POSTs per second of the baselines run just before and
   * just after this scenario (their mean), the median over the rounds; this run is that
   * median's round. `roundsVsBaseline` gives every round's.
   */
  vsBaseline: number;
  roundsVsBaseline: number[];
  /** Each round's baselines: `baselines[i]` ran just before this scenario's run and `baselines[i + 1]` just after. */
  baselinesAround: number[];
  /** The same against the better of all the run's baselines (how the bench compared before it had rounds). */
  vsBestBaseline: number;
}

/** One scenario run, before it is compared with the baselines around it. */
export type DeliveryRun = Omit<ScenarioResult, 'vsBaseline' | 'roundsVsBaseline' | 'baselinesAround' | 'vsBestBaseline'>;

export interface BenchResult {
  cpus: number;
  node: string;
  /**
   * The baseline run with the median rate of the run's baselines (rounds × scenarios + 1 of them, all in
   * `baselines`). cpuMsPerRequest: the bench process's CPU per raw POST, the sender's own cost (a
   * delivery's CPU less this is what the outbox adds).
   */
  baselines: number[];
  baseline: { requests: number; concurrency: number; seconds: number; requestsPerSec: number; cpuMsPerRequest: number };
  enqueue: { events: number; endpoints: number; seconds: number; eventsPerSec: number; p50Ms: number; p99Ms: number };
  /** POST /v1/widgets/{id}/events over HTTP with a widget key, while the dispatcher delivers the events. */
  enqueueHttp: {
    events: number;
    measured: number;
    concurrency: number;
    seconds: number;
    eventsPerSec: number;
    p50Ms: number;
    p99Ms: number;
    delivered: number;
  };
  scenarios: ScenarioResult[];
  /** Signing alone, per delivery: the HMAC pair every delivery carries, and X-Service-Signature plus one v1a signature. */
  signing: { hmacUs: number; v1aUs: number; deliveries: number };
}

type ReceiverCounts = { count: number; distinct: number; failed: number; outOfOrder: number };

export async function startReceiver(): Promise<{ child: ChildProcess; url: string; ask(m: unknown): Promise<unknown> }> {
  const child = fork(new URL('./receiver.js', import.meta.url), [], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  const ask = (m: unknown) =>
    new Promise<unknown>((resolve) => {
      child.once('message', resolve);
      child.send(m as never);
    });
  return { child, url: `http://127.0.0.1:${String(first.value).trim()}/hook`, ask };
}

const BODY = deliveryBody('conversation.started', 'wid_bench', { conversation_id: 'ses_bench', visitor_id: 'vis_bench' });

/** Raw POSTs from the same sender (keep-alive agent, same headers and body size) with no outbox: the ceiling. */
async function baseline(url: string, requests: number, concurrency: number) {
  const sender = createSender();
  const target = new URL(url);
  const headers = { 'content-type': 'application/json', 'x-service-signature': serviceSignature(BODY, 'whsec_x') };
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next++;
        const r = await sender.send({ url: target, addresses: [{ address: '127.0.0.1', family: 4 }], headers, body: BODY, timeoutMs: 10_000 });
        if (r.kind !== 'response' || r.status >= 300) throw new Error(`baseline request failed: ${JSON.stringify(r)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  sender.close();
  return {
    requests,
    concurrency,
    seconds,
    requestsPerSec: Math.round(requests / seconds),
    cpuMsPerRequest: Math.round(((used.user + used.system) / 1000 / requests) * 1000) / 1000,
  };
}

/** A fresh SQLite file with its WAL checkpoints off the event loop once it is busy, as `serve` opens it. */
function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-'));
  const file = join(dir, 'bench.db');
  const db = openDatabase(file);
  const checkpoints = new BackgroundCheckpoints(db, file);
  const store = new SqliteWebhookStore(db);
  return {
    dir,
    db,
    store,
    checkpoints,
    dispose: async () => {
      await checkpoints.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Events accepted per second through emit() (validation + one committed transaction each), one endpoint subscribed. */
async function enqueue(url: string, events: number) {
  const { store, dispose } = fresh();
  try {
    const sender = createSender();
    const dispatcher = new Dispatcher({ store, send: sender.send, allowPrivate: true });
    const service = new WebhookService({ store, dispatcher, getTenant: async () => null });
    const { widget } = await store.createWidget(1 as TenantId, 'bench', { hash: 'h-enqueue', preview: 'bwk_' });
    await store.createEndpoint(widget.id, { url, secret: 'whsec_YmVuY2g=', events: ['conversation.started'], enabled: true });
    const lat: number[] = [];
    const started = performance.now();
    for (let i = 0; i < events; i++) {
      const t = performance.now();
      await service.emitFor(widget, 'conversation.started', { conversation_id: `ses_${i}`, visitor_id: 'vis_1' });
      lat.push(performance.now() - t);
    }
    const seconds = (performance.now() - started) / 1000;
    sender.close();
    return { events, endpoints: 1, seconds, eventsPerSec: Math.round(events / seconds), ...percentiles(lat) };
  } finally {
    await dispose();
  }
}

function percentiles(lat: number[]) {
  lat.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]! * 1000) / 1000;
  return { p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/** One widget key posts far past its default 600 events a minute here: the benchmark measures throughput. */
const BENCH_LIMITS = { widgetKey: { limit: 1e9, windowMs: 60_000 } };

/** The whole accept path: HTTP, widget-key auth, validation, commit, 202; the client runs in the same process. */
async function enqueueHttp(url: string, events: number, concurrency: number) {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-'));
  const server = await startEmbedded({ port: 0, db: join(dir, 'bench.db'), allowPrivateWebhooks: true, limits: BENCH_LIMITS });
  try {
    const tenant = await new SqliteIdentityStore(server.db).createTenant('bench', 'pro');
    const key = newToken('widgetKey');
    const store = server.webhooks.service.store;
    const { widget } = await store.createWidget(tenant.id, 'bench', { hash: hashToken(key), preview: key.slice(0, 8) });
    const ep = await store.createEndpoint(widget.id, { url, secret: 'whsec_YmVuY2g=', events: ['conversation.started'], enabled: true });
    const path = `/v1/widgets/${widget.id}/events`;
    // node:http with a keep-alive agent: in one process it loads the event loop far less than fetch.
    const agent = new http.Agent({ keepAlive: true });
    const post = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ event: 'conversation.started', data: { conversation_id: `ses_${i}` } });
        const r = http.request(
          {
            host: '127.0.0.1',
            port: server.port,
            path,
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        r.on('error', reject);
        r.end(body);
      });
    // Each post starts a conversation of its own: a repeated conversation.started is accepted but
    // makes no delivery, so the warm-up and the measured posts never share an id.
    const run = async (first: number, count: number, lat: number[] | null) => {
      let next = first;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < first + count) {
            const i = next++;
            const t = performance.now();
            const status = await post(i);
            if (status !== 202) throw new Error(`enqueue over HTTP: ${status}`);
            lat?.push(performance.now() - t);
          }
        }),
      );
    };
    const warmup = Math.min(1000, events);
    await run(0, warmup, null);
    const lat: number[] = [];
    const started = performance.now();
    await run(warmup, events, lat);
    const seconds = (performance.now() - started) / 1000;
    agent.destroy();
    // Every accepted event must reach the receiver: the count is taken once the outbox is drained (or after 60 s).
    const total = warmup + events;
    const succeeded = server.db.prepare(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'succeeded'`);
    const countDelivered = () => (succeeded.get(ep.id) as { n: number }).n;
    const drainBy = performance.now() + 60_000;
    let delivered = countDelivered();
    while (delivered < total && performance.now() < drainBy) {
      if ((await server.webhooks.dispatcher.runDue()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      delivered = countDelivered();
    }
    return {
      events: total,
      measured: events,
      concurrency,
      seconds,
      eventsPerSec: Math.round(events / seconds),
      ...percentiles(lat),
      delivered,
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `atStart` runs once the outbox is filled, just before the dispatcher starts (the profiler starts there). */
export async function deliver(
  rx: Awaited<ReturnType<typeof startReceiver>>,
  s: Scenario,
  deliveries: number,
  atStart?: () => Promise<void>,
): Promise<DeliveryRun> {
  const { db, store, checkpoints, dispose } = fresh();
  const sender = createSender();
  const failFirst = s.failFirst ?? 0;
  const ordered = s.ordered ?? true;
  const scheme = s.scheme ?? 'hmac';
  try {
    await rx.ask({ fail: failFirst });
    const { widget } = await store.createWidget(1 as TenantId, 'bench', { hash: `h-${s.name}`, preview: 'bwk_' });
    for (let i = 0; i < s.endpoints; i++) {
      // A path per endpoint, so the receiver checks order per endpoint.
      await store.createEndpoint(widget.id, {
        url: `${rx.url}/${i}`,
        secret: 'whsec_YmVuY2g=',
        events: ['conversation.started'],
        enabled: true,
        signatureScheme: scheme,
      });
    }
    const events = Math.ceil(deliveries / s.endpoints);
    // Conversations of EVENTS_PER_CONVERSATION events each, data.n their place in it.
    for (let i = 0; i < events; i++) {
      const conversation = `ses_${Math.floor(i / EVENTS_PER_CONVERSATION)}`;
      const checked = validateEvent('conversation.started', { conversation_id: conversation, n: i % EVENTS_PER_CONVERSATION });
      if (!checked.ok) throw new Error('bench event invalid');
      await store.enqueue(widget.id, 'conversation.started', deliveryBody('conversation.started', widget.id, checked.data), undefined, undefined, conversation);
    }
    const dispatcher = new Dispatcher({
      store,
      send: sender.send,
      allowPrivate: true,
      perEndpoint: s.perEndpoint,
      concurrency: s.concurrency,
      keys: new SigningKeys(store),
      orderHoldMs: ordered ? undefined : 0,
      retryDelays: [RETRY_MS, RETRY_MS, RETRY_MS],
      // Retries fall due RETRY_MS after a failure: look for them that often.
      pollMs: RETRY_MS,
      random: () => 0.5,
    });
    const total = events * s.endpoints;
    // Filling the outbox made the file busy: its checkpoint thread runs from the start, as in a busy server.
    checkpoints.look();
    if (checkpoints.running) await checkpoints.ready;
    // The fill's pages are copied into the file before the clock starts: copying them is the intake's
    // work, and on a 2-core machine it took CPU from the receiver while the deliveries were measured.
    // RESTART, not TRUNCATE: the WAL keeps its size and is written over from its start, as a busy
    // server's is (a truncated one grows again at every commit, which costs more per commit).
    const copied = db.pragma('wal_checkpoint(RESTART)') as { busy: number; log: number; checkpointed: number }[];
    const walPagesAtStart = copied[0]!.log - copied[0]!.checkpointed;
    await atStart?.();
    const cpu = process.cpuUsage();
    const started = performance.now();
    // Running as in a server (start(): a freed slot is refilled at once, retries found by the
    // poll), until every delivery has succeeded.
    await dispatcher.start();
    while (dispatcher.attempts.succeeded < total) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - started) / 1000;
    await dispatcher.stop();
    const attempts = dispatcher.attempts.succeeded + dispatcher.attempts.retrying + dispatcher.attempts.failed;
    const used = process.cpuUsage(cpu);
    const counts = (await rx.ask('count')) as ReceiverCounts;
    if (attempts < total) throw new Error(`${s.name}: expected at least ${total} attempts, made ${attempts}`);
    return {
      scenario: s.name,
      endpoints: s.endpoints,
      perEndpoint: s.perEndpoint,
      concurrency: s.concurrency,
      ordered,
      failFirst,
      scheme,
      deliveries: total,
      attempts,
      seconds,
      deliveriesPerSec: Math.round(total / seconds),
      cpuMsPerDelivery: Math.round(((used.user + used.system) / 1000 / total) * 1000) / 1000,
      outOfOrder: counts.outOfOrder,
      received: counts.distinct,
      walPagesAtStart,
    };
  } finally {
    sender.close();
    await dispose();
  }
}

function ratio(x: number, of: number): number {
  return Math.round((1000 * x) / of) / 1000;
}

/** The index of the median of `xs` (of the lower middle one when their count is even). */
function medianIndex(xs: readonly number[]): number {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  return order[Math.floor((order.length - 1) / 2)]![1];
}

/** CPU per delivery of the signatures alone: hmac (X-Service-Signature and one v1,) against X-Service-Signature and one v1a. */
function signing(deliveries: number) {
  const body = BODY;
  const key = standardKey('whsec_YmVuY2g=');
  const pair = generateEd25519();
  const ed = ed25519PrivateKey(pair.seed);
  const time = (fn: (i: number) => void) => {
    for (let i = 0; i < 1000; i++) fn(i);
    const cpu = process.cpuUsage();
    for (let i = 0; i < deliveries; i++) fn(i);
    const used = process.cpuUsage(cpu);
    return Math.round(((used.user + used.system) / deliveries) * 100) / 100;
  };
  const hmacUs = time((i) => {
    serviceSignature(body, 'whsec_YmVuY2g=');
    standardSignature(`dlv_${i}`, 1_700_000_000, body, key);
  });
  const v1aUs = time((i) => {
    serviceSignature(body, 'whsec_YmVuY2g=');
    asymmetricSignature(`dlv_${i}`, 1_700_000_000, body, ed);
  });
  return { hmacUs, v1aUs, deliveries };
}

/**
 * The machine's speed swings within a run (other processes), so a scenario is compared with the
 * raw POSTs measured around it: a baseline runs before every scenario run and one more after the
 * last, so each scenario run lies between two baselines of its own minute (not a round of every
 * other scenario away); its ratio is against the mean of those two, and the median over the
 * rounds is reported.
 */
export async function runWebhooksBench(options: BenchOptions, scenarios: Scenario[] = SCENARIOS): Promise<BenchResult> {
  const rounds = options.rounds ?? 1;
  const rx = await startReceiver();
  try {
    // Warm the receiver and the JIT once, then measure.
    await baseline(rx.url, 2000, 64);
    const bases = [await baseline(rx.url, options.deliveries, 64)];
    const enq = await enqueue(rx.url, options.events);
    const enqHttp = await enqueueHttp(rx.url, options.events, 16);
    const runs: DeliveryRun[][] = scenarios.map(() => []);
    /** Where each scenario run's baselines are: bases[at] just before it, bases[at + 1] just after. */
    const around: number[][] = scenarios.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [i, s] of scenarios.entries()) {
        if (round > 0 || i > 0) bases.push(await baseline(rx.url, options.deliveries, 64));
        around[i]!.push(bases.length - 1);
        runs[i]!.push(await deliver(rx, s, options.deliveries));
      }
    }
    bases.push(await baseline(rx.url, options.deliveries, 64));
    const rates = bases.map((b) => b.requestsPerSec);
    const best = Math.max(...rates);
    const results = runs.map((perRound, i) => {
      const ratios = perRound.map((r, round) => {
        const at = around[i]![round]!;
        return ratio(r.deliveriesPerSec, (rates[at]! + rates[at + 1]!) / 2);
      });
      const middle = medianIndex(ratios);
      return {
        ...perRound[middle]!,
        vsBaseline: ratios[middle]!,
        roundsVsBaseline: ratios,
        baselinesAround: around[i]!,
        vsBestBaseline: ratio(perRound[middle]!.deliveriesPerSec, best),
      };
    });
    return {
      cpus: (await import('node:os')).availableParallelism(),
      node: process.version,
      baselines: rates,
      baseline: bases[medianIndex(rates)]!,
      enqueue: enq,
      enqueueHttp: enqHttp,
      scenarios: results,
      signing: signing(Math.min(options.deliveries, 20_000)),
    };
  } finally {
    rx.child.kill();
  }
}

export function formatTable(r: BenchResult): string {
  const rows: string[][] = [
    [
      'scenario',
      'endpoints',
      'in flight (per endpoint / total)',
      'deliveries',
      'attempts',
      'seconds',
      'deliveries/s',
      'vs baseline',
      'CPU ms/delivery',
      'out of order',
    ],
  ];
  rows.push([
    'baseline: raw POSTs, same sender',
    '1',
    `- / ${r.baseline.concurrency}`,
    String(r.baseline.requests),
    String(r.baseline.requests),
    r.baseline.seconds.toFixed(2),
    String(r.baseline.requestsPerSec),
    '100%',
    String(r.baseline.cpuMsPerRequest),
    '',
  ]);
  for (const s of r.scenarios) {
    rows.push([
      s.scenario,
      String(s.endpoints),
      `${s.perEndpoint} / ${s.concurrency}`,
      String(s.deliveries),
      String(s.attempts),
      s.seconds.toFixed(2),
      String(s.deliveriesPerSec),
      `${Math.round(100 * s.vsBaseline)}%${s.roundsVsBaseline.length > 1 ? ` (${s.roundsVsBaseline.map((x) => Math.round(100 * x)).join(', ')})` : ''}`,
      String(s.cpuMsPerDelivery),
      s.received === s.deliveries ? String(s.outOfOrder) : `${s.outOfOrder} (received ${s.received})`,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const out = [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)];
  out.push(
    '',
    `enqueue (emit → committed, 1 endpoint): ${r.enqueue.eventsPerSec} events/s, p50 ${r.enqueue.p50Ms} ms, p99 ${r.enqueue.p99Ms} ms over ${r.enqueue.events} events`,
  );
  const h = r.enqueueHttp;
  out.push(
    `enqueue over HTTP (POST …/events, widget key, ${h.concurrency} concurrent, same process, dispatcher delivering): ${h.eventsPerSec} events/s, p50 ${h.p50Ms} ms, p99 ${h.p99Ms} ms; ${h.delivered}/${h.events} delivered (warm-up included)`,
  );
  out.push(
    `signing alone, CPU per delivery over ${r.signing.deliveries}: hmac (X-Service-Signature + v1,) ${r.signing.hmacUs} µs; v1a (X-Service-Signature + v1a,) ${r.signing.v1aUs} µs`,
  );
  out.push(
    `vs baseline: against the mean of the raw-POST runs just before and after each scenario run (${r.baselines.join(', ')} POSTs/s in order), the median over the rounds (each round's in brackets)`,
  );
  out.push(`node ${r.node}, ${r.cpus} CPUs`);
  return out.join('\n');
}
