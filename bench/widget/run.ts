import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOpenAI, type FakeOpenAI } from '../fake-openai.js';
import { ADMIN, ROOT, call, startChild, stop } from '../control-plane/run.js';

export interface WidgetBenchOptions {
  /** Open visitor conversations, each with its event stream (default 1,000). */
  conversations: number;
  /** Replies streaming at any moment (default 100). */
  streaming: number;
  /** The fake model's pace, tokens per second (default 30). */
  tokensPerSecond: number;
  /** Tokens per reply (default 40). */
  tokens: number;
  /** Seconds of streaming per server (default 20). */
  seconds: number;
  log: (line: string) => void;
}

interface Latencies {
  /** Model wrote a piece → the visitor read it, ms. */
  chunk: number[];
  /** Model wrote its first piece → the visitor read the first byte of the reply, ms. */
  first: number[];
}

export interface Side {
  server: 'brainstem' | 'bare uWS SSE relay';
  conversations: number;
  rssBeforeMiB: number;
  rssOpenMiB: number;
  bytesPerConversation: number;
  replies: number;
  seconds: number;
  repliesPerSec: number;
  chunksPerSec: number;
  chunkP50Ms: number;
  chunkP99Ms: number;
  firstP50Ms: number;
  firstP99Ms: number;
  lost: number;
}

export interface WidgetBenchResult {
  cpus: number;
  node: string;
  load: number[];
  options: Omit<WidgetBenchOptions, 'log'>;
  widget: Side;
  baseline: Side;
  /** brainstem's p99 less the bare relay's p99: what the server itself adds. */
  addedChunkP99Ms: number;
  addedFirstP99Ms: number;
  goals: { chunkP99Ms: number; firstP99Ms: number; bytesPerConversation: number };
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

function pct(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Reads a server-sent-events response, calling `on` per event until it ends. */
async function readEvents(res: Response, on: (event: string, data: any) => void): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data) on(event, JSON.parse(data));
    }
  }
}

/** Opens an event stream and resolves once its first event arrived; the stream stays open until `stop`. */
async function openIdle(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<void> {
  const res = await fetch(url, { headers, signal });
  if (res.status !== 200) throw new Error(`event stream ${url}: ${res.status}`);
  await new Promise<void>((resolve) => {
    readEvents(res, () => resolve()).catch(() => resolve());
  });
}

interface Target {
  pid: number;
  /** Opens one conversation's idle event stream. */
  open(i: number, signal: AbortSignal): Promise<void>;
  /** Sends message `text` in conversation `i` and reads the reply stream. */
  ask(i: number, text: string, onDelta: (text: string) => void): Promise<boolean>;
}

async function measure(name: Side['server'], target: Target, fake: FakeOpenAI, sent: Map<string, number>, o: WidgetBenchOptions): Promise<Side> {
  const rssBefore = rssOf(target.pid);
  const idle = new AbortController();
  for (let i = 0; i < o.conversations; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, o.conversations - i) }, (_, k) => target.open(i + k, idle.signal)));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const rssOpen = rssOf(target.pid);
  o.log(`${name}: ${o.conversations} conversations open, RSS ${(rssOpen / 2 ** 20).toFixed(1)} MiB (from ${(rssBefore / 2 ** 20).toFixed(1)})`);

  const lat: Latencies = { chunk: [], first: [] };
  let replies = 0;
  let chunks = 0;
  let lost = 0;
  let next = 0;
  const until = now() + o.seconds * 1000;
  const started = now();
  fake.tokensPerSecond = o.tokensPerSecond;
  await Promise.all(
    Array.from({ length: o.streaming }, async (_, w) => {
      let n = 0;
      while (now() < until) {
        const conv = next++ % o.conversations;
        const text = `q${w}x${n++}`;
        let seen = 0;
        const ok = await target.ask(conv, text, (piece) => {
          const at = now();
          const i = Number(/^t(\d+)/.exec(piece)?.[1] ?? NaN);
          const from = sent.get(`${text}:${i}`);
          if (from === undefined) return;
          sent.delete(`${text}:${i}`);
          lat.chunk.push(at - from);
          if (i === 0) lat.first.push(at - from);
          seen++;
          chunks++;
        });
        if (ok && seen === o.tokens) replies++;
        else lost++;
      }
    }),
  );
  const seconds = (now() - started) / 1000;
  idle.abort();
  return {
    server: name,
    conversations: o.conversations,
    rssBeforeMiB: Math.round((rssBefore / 2 ** 20) * 10) / 10,
    rssOpenMiB: Math.round((rssOpen / 2 ** 20) * 10) / 10,
    bytesPerConversation: Math.round((rssOpen - rssBefore) / o.conversations),
    replies,
    seconds: Math.round(seconds * 10) / 10,
    repliesPerSec: Math.round((replies / seconds) * 10) / 10,
    chunksPerSec: Math.round(chunks / seconds),
    chunkP50Ms: pct(lat.chunk, 50),
    chunkP99Ms: pct(lat.chunk, 99),
    firstP50Ms: pct(lat.first, 50),
    firstP99Ms: pct(lat.first, 99),
    lost,
  };
}

/**
 * `brainstem bench widget`: `serve` in a child process with the widget's model pointed at a
 * fake OpenAI-compatible server (in this process) streaming at `tokensPerSecond`; 1,000 open
 * conversations each holding an event stream, then `streaming` of them asking at any moment.
 * Beside it, in the same run, a bare uWS SSE relay of the same fake model with as many idle
 * streams. Latencies are timed on this process's monotonic clock from the moment the fake
 * writes a piece to the moment the visitor reads it.
 */
export async function runWidgetBench(o: WidgetBenchOptions): Promise<WidgetBenchResult> {
  const fake = await startFakeOpenAI();
  const sent = new Map<string, number>();
  fake.reply = () => Array.from({ length: o.tokens }, (_, i) => `t${i}`).join(' ');
  fake.onChunk = (i, body) => {
    const last = body.messages.at(-1)?.content as string;
    sent.set(`${last}:${i}`, now());
  };
  const dir = mkdtempSync(join(tmpdir(), 'bench-widget-'));
  const children: ChildProcess[] = [];
  try {
    const limits = join(dir, 'limits.json');
    const big = { limit: 1e9, windowSeconds: 60 };
    // Every simulated visitor comes from 127.0.0.1 to one widget, so the per-address caps (1,000
    // connections, 100 live chat streams, meant for one real client), the per-tenant and total
    // stream caps (up to --conversations 100,000, each with a stream and maybe a reply) and the
    // per-widget rates would refuse the crowd's streams and messages.
    writeFileSync(
      limits,
      JSON.stringify({
        widgetVisitor: big,
        widgetConversationMessages: big,
        widgetAddress: big,
        widgetConversationsPerWidget: big,
        widgetMessagesPerWidget: big,
        widgetStreamsPerAddress: 250_000,
        widgetStreamsPerTenant: 250_000,
        widgetStreamsTotal: 250_000,
        session: 1e9,
        connectionsPerAddress: 500_000,
        connectionsTotal: 500_000,
      }),
    );
    const env = {
      ...process.env,
      SERVICE_ADMIN_TOKEN: ADMIN,
      BRAINSTEM_LOG: 'error',
      SERVICE_LLM_BASE_URL: fake.baseUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_KEY: 'sk-bench',
    };
    const s = await startChild(
      process.execPath,
      [join(ROOT, 'bin', 'brainstem'), 'serve', '--addr', '127.0.0.1:0', '--db', join(dir, 'bench.db'), '--data', join(dir, 'data'), '--limits', limits],
      env,
      /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    );
    children.push(s.child);
    const base = `http://127.0.0.1:${s.port}`;
    const tenant = await call(base, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(base, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password' });
    const { token } = await call(base, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
    const widget = await call(base, 'POST', '/v1/widgets', token, { name: 'bench' });
    const conversations: { conversation_id: string; token: string }[] = [];
    for (let i = 0; i < o.conversations; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, o.conversations - i) }, () => call(base, 'POST', `/v1/widgets/${widget.id}/conversations`, null, {})),
      );
      conversations.push(...batch);
    }
    const widgetSide = await measure(
      'brainstem',
      {
        pid: s.child.pid!,
        open: (i, signal) =>
          openIdle(`${base}/v1/conversations/${conversations[i]!.conversation_id}/events`, { authorization: `Bearer ${conversations[i]!.token}` }, signal),
        async ask(i, text, onDelta) {
          const c = conversations[i]!;
          const res = await fetch(`${base}/v1/conversations/${c.conversation_id}/messages`, {
            method: 'POST',
            headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ text }),
          });
          if (res.status !== 200) return false;
          let done = false;
          await readEvents(res, (event, data) => {
            if (event === 'delta') onDelta(String(data.text));
            else if (event === 'done') done = data.handled_by === 'agent' && data.message !== null;
          });
          return done;
        },
      },
      fake,
      sent,
      o,
    );
    // Nothing lost: every reply the visitors read is stored whole.
    let stored = 0;
    for (const c of conversations) {
      const t = await call(base, 'GET', `/v1/widgets/${widget.id}/conversations/${c.conversation_id}`, token);
      stored += (t.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent' && m.text.split(' ').length === o.tokens).length;
    }
    widgetSide.lost += Math.max(0, widgetSide.replies - stored);
    o.log(`brainstem: ${widgetSide.replies} replies read, ${stored} stored whole`);
    await stop(s.child);
    children.length = 0;

    const bare = await startChild(
      process.execPath,
      [join(ROOT, 'dist', 'bench', 'widget', 'bare-sse.js')],
      { ...process.env, BARE_MODEL_URL: fake.baseUrl },
      /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    );
    children.push(bare.child);
    const bareBase = `http://127.0.0.1:${bare.port}`;
    const baseline = await measure(
      'bare uWS SSE relay',
      {
        pid: bare.child.pid!,
        open: (_i, signal) => openIdle(`${bareBase}/events`, {}, signal),
        async ask(_i, text, onDelta) {
          const res = await fetch(`${bareBase}/relay?key=${encodeURIComponent(text)}`, { method: 'POST', body: '' });
          if (res.status !== 200) return false;
          let done = false;
          await readEvents(res, (event, data) => {
            if (event === 'delta') onDelta(String(data.text));
            else if (event === 'done') done = true;
          });
          return done;
        },
      },
      fake,
      sent,
      o,
    );
    const { log: _log, ...options } = o;
    return {
      cpus: cpus().length,
      node: process.version,
      load: loadavg().map((l) => Math.round(l * 100) / 100),
      options,
      widget: widgetSide,
      baseline,
      addedChunkP99Ms: Math.round((widgetSide.chunkP99Ms - baseline.chunkP99Ms) * 100) / 100,
      addedFirstP99Ms: Math.round((widgetSide.firstP99Ms - baseline.firstP99Ms) * 100) / 100,
      goals: { chunkP99Ms: 5, firstP99Ms: 20, bytesPerConversation: 50 * 1024 },
    };
  } finally {
    for (const c of children) await stop(c);
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatTable(r: WidgetBenchResult): string {
  const row = (s: Side) =>
    `| ${s.server} | ${s.conversations} | ${(s.bytesPerConversation / 1024).toFixed(1)} KB | ${s.replies} in ${s.seconds} s (${s.repliesPerSec}/s, ${s.chunksPerSec} chunks/s) | ${s.chunkP50Ms} / ${s.chunkP99Ms} ms | ${s.firstP50Ms} / ${s.firstP99Ms} ms | ${s.lost} |`;
  return [
    `bench widget: ${r.options.conversations} open conversations, ${r.options.streaming} streaming at ${r.options.tokensPerSecond} tokens/s (${r.options.tokens} tokens a reply); ${r.cpus} CPUs, load ${r.load.join(' ')}`,
    '',
    '| server | open conversations | memory per conversation | replies | chunk latency p50 / p99 | first byte p50 / p99 | lost |',
    '|---|---|---|---|---|---|---|',
    row(r.widget),
    row(r.baseline),
    '',
    `added by brainstem at p99: ${r.addedChunkP99Ms} ms per chunk (goal ≤ ${r.goals.chunkP99Ms}), ${r.addedFirstP99Ms} ms to the first byte (goal ≤ ${r.goals.firstP99Ms}); memory per open conversation ${(r.widget.bytesPerConversation / 1024).toFixed(1)} KB (goal ≤ 50 KB)`,
  ].join('\n');
}
