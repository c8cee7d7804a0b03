import { Piscina } from 'piscina';
import type { ConfigBundle, TickRequest, TickResponse, WorkerReply, WorkerTask } from '../../brain/index.js';
import { InlineEvaluator, mergeEvents, type BrainTelemetry, type Evaluator, type EvaluatorOptions } from './evaluator.js';

const WORKER_FILE = new URL('../../brain/worker.js', import.meta.url).href;

interface Pending {
  request: TickRequest;
  resolve(response: TickResponse): void;
  reject(err: Error): void;
}

/**
 * One agent shard: a single-thread pool, so its tasks run one after another in queue order
 * and its agents' state never moves. Ticks that arrive in the same turn of the event loop
 * travel as one task (a piscina round trip costs tens of microseconds of main-thread CPU).
 */
class Shard {
  private readonly pool: Piscina<WorkerTask, WorkerReply>;
  private batch: Pending[] = [];
  private scheduled = false;
  private bundle: ConfigBundle;
  private readonly maxAgents: number | undefined;

  constructor(bundle: ConfigBundle, options: EvaluatorOptions) {
    this.bundle = bundle;
    this.maxAgents = options.maxAgents;
    this.pool = new Piscina<WorkerTask, WorkerReply>({
      filename: WORKER_FILE,
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: 1,
    });
    // Queued first, so it runs before any tick.
    void this.send(this.bundleTask());
  }

  private bundleTask(): WorkerTask {
    return { type: 'bundle', bundle: this.bundle, ...(this.maxAgents === undefined ? {} : { maxAgents: this.maxAgents }) };
  }

  tick(request: TickRequest): Promise<TickResponse> {
    return new Promise((resolve, reject) => {
      this.batch.push({ request, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends the pending ticks as one task; called on setImmediate and before a bundle change. */
  flush(): void {
    this.scheduled = false;
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    const requests = batch.map((p) => p.request);
    this.send({ type: 'tick', requests }).then(
      (reply) => {
        if (reply.type !== 'tick') throw new Error(`worker answered ${reply.type} to a tick task`);
        const failed = new Map(reply.failures.map((f) => [f.index, f.message]));
        for (let i = 0; i < batch.length; i++) {
          const response = reply.responses[i];
          if (response) batch[i]!.resolve(response);
          else batch[i]!.reject(new Error(`brain tick failed: ${failed.get(i) ?? 'no response'}`));
        }
      },
      (err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        for (const p of batch) p.reject(error);
      },
    ).catch((err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const p of batch) p.reject(error);
    });
  }

  /**
   * Runs a task; a thread that piscina started to replace a dead one has no bundle (and its
   * agents' state is gone), so it gets the current bundle and the task once more.
   */
  async send(task: WorkerTask): Promise<WorkerReply> {
    const reply = await this.pool.run(task);
    if (reply.type !== 'no_bundle') return reply;
    await this.pool.run(this.bundleTask());
    return this.pool.run(task);
  }

  async setBundle(bundle: ConfigBundle): Promise<void> {
    this.flush();
    this.bundle = bundle;
    await this.send(this.bundleTask());
  }

  async drain(): Promise<BrainTelemetry> {
    this.flush();
    const reply = await this.send({ type: 'drain' });
    if (reply.type !== 'drain') throw new Error(`worker answered ${reply.type} to a drain task`);
    return reply.telemetry;
  }

  async close(): Promise<void> {
    this.flush();
    await this.pool.close();
  }
}

/**
 * Agents sharded over fixed single-thread worker pools. Agents interact only through squads,
 * so a squad's members share a shard (chosen by a hash of the squad id) and see one another's
 * ticks in arrival order, as they would inline; an agent without a squad goes by its id. The
 * rule is stateless, so it is the same after a restart. An agent that changes squad moves to
 * another shard and starts there from a fresh state.
 */
export class PoolEvaluator implements Evaluator {
  readonly mode = 'workers';
  readonly workers: number;
  private readonly shards: Shard[];

  constructor(bundle: ConfigBundle, workers: number, options: EvaluatorOptions = {}) {
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`workers must be a positive integer, got ${workers}`);
    this.workers = workers;
    this.shards = Array.from({ length: workers }, () => new Shard(bundle, options));
  }

  private shardOf(request: TickRequest): Shard {
    const n = this.shards.length;
    const squad = request.snapshot.squad;
    const key = squad ? fnv1a(squad) : request.snapshot.agent;
    return this.shards[((key % n) + n) % n]!;
  }

  tick(request: TickRequest): Promise<TickResponse> {
    return this.shardOf(request).tick(request);
  }

  async setBundle(bundle: ConfigBundle): Promise<void> {
    await Promise.all(this.shards.map((s) => s.setBundle(bundle)));
  }

  async drain(): Promise<BrainTelemetry> {
    const parts = await Promise.all(this.shards.map((s) => s.drain()));
    const out: BrainTelemetry = { events: {}, roster: [], agents: 0 };
    for (const part of parts) {
      mergeEvents(out.events, part.events);
      out.roster.push(...part.roster);
      out.agents += part.agents;
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
  }
}

/** 32-bit FNV-1a of a string's UTF-16 units: cheap, stable across processes. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function createEvaluator(bundle: ConfigBundle, workers: number, options: EvaluatorOptions = {}): Evaluator {
  return workers === 0 ? new InlineEvaluator(bundle, options) : new PoolEvaluator(bundle, workers, options);
}
