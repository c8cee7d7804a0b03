import { Piscina } from 'piscina';
import {
  Brain,
  STATE_FORMAT,
  STATE_VERSION,
  type BrainState,
  type ConfigBundle,
  type MapSurvivor,
  type TickRequest,
  type TickResponse,
} from '../../../brain/index.js';
import type { DialoguePersona } from '../dialogue.js';
import { InlineEvaluator, mergeEvents, type BrainTelemetry, type Evaluator, type EvaluatorOptions } from './evaluator.js';
import type { ShardReply as WorkerReply, ShardTask as WorkerTask } from './worker.js';

const WORKER_FILE = new URL('./worker.js', import.meta.url).href;

/** Personas kept from workers for the dialogue tier, at most (oldest first out). */
const MAX_PERSONAS = 10_000;

interface Pending {
  request: TickRequest;
  wantPersona: boolean;
  explain: boolean;
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

  private readonly onPersona: (agent: number, persona: DialoguePersona) => void;

  constructor(bundle: ConfigBundle, options: EvaluatorOptions, onPersona: (agent: number, persona: DialoguePersona) => void) {
    this.onPersona = onPersona;
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

  tick(request: TickRequest, wantPersona: boolean, explain: boolean): Promise<TickResponse> {
    return new Promise((resolve, reject) => {
      this.batch.push({ request, wantPersona, explain, resolve, reject });
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
    let personas: number[] | undefined;
    let explain: number[] | undefined;
    for (let i = 0; i < batch.length; i++) {
      if (batch[i]!.wantPersona) (personas ??= []).push(i);
      if (batch[i]!.explain) (explain ??= []).push(i);
    }
    const task: WorkerTask = { type: 'tick', requests };
    if (personas) task.personas = personas;
    if (explain) task.explain = explain;
    this.send(task)
      .then(
        (reply) => {
          if (reply.type !== 'tick') throw new Error(`worker answered ${reply.type} to a tick task`);
          if (reply.personas) for (const [agent, persona] of reply.personas) this.onPersona(agent, persona);
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
      )
      .catch((err: unknown) => {
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

  async exportText(): Promise<string> {
    this.flush();
    const reply = await this.send({ type: 'export' });
    if (reply.type !== 'export') throw new Error(`worker answered ${reply.type} to an export task`);
    return reply.text;
  }

  async importState(state: BrainState): Promise<number> {
    this.flush();
    const reply = await this.send({ type: 'import', state });
    if (reply.type !== 'import') throw new Error(`worker answered ${reply.type} to an import task`);
    return reply.agents;
  }

  async drain(): Promise<BrainTelemetry> {
    this.flush();
    const reply = await this.send({ type: 'drain' });
    if (reply.type !== 'drain') throw new Error(`worker answered ${reply.type} to a drain task`);
    return reply.telemetry;
  }

  async mapRoster(): Promise<MapSurvivor[]> {
    this.flush();
    const reply = await this.send({ type: 'map' });
    if (reply.type !== 'map') throw new Error(`worker answered ${reply.type} to a map task`);
    return reply.rows;
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
  readonly liveAgents = null;

  readonly mode = 'workers';
  readonly workers: number;
  private readonly shards: Shard[];
  private readonly personas = new Map<number, DialoguePersona>();
  private readonly bundle: ConfigBundle;

  constructor(bundle: ConfigBundle, workers: number, options: EvaluatorOptions = {}) {
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`workers must be a positive integer, got ${workers}`);
    this.workers = workers;
    this.bundle = bundle;
    const keep = (agent: number, persona: DialoguePersona): void => {
      this.personas.delete(agent);
      this.personas.set(agent, persona);
      if (this.personas.size > MAX_PERSONAS) this.personas.delete(this.personas.keys().next().value!);
    };
    this.shards = Array.from({ length: workers }, () => new Shard(bundle, options, keep));
  }

  private shardIndex(squad: string | undefined, agent: number): number {
    const n = this.shards.length;
    const key = squad ? fnv1a(squad) : agent;
    return ((key % n) + n) % n;
  }

  tick(request: TickRequest, wantPersona = false, explain = false): Promise<TickResponse> {
    return this.shards[this.shardIndex(request.snapshot.squad, request.snapshot.agent as number)]!.tick(request, wantPersona, explain);
  }

  persona(agent: number): DialoguePersona | null {
    return this.personas.get(agent) ?? null;
  }

  async *exportAgents(): AsyncGenerator<string> {
    for (const shard of this.shards) {
      const text = await shard.exportText();
      if (text !== '') yield text;
    }
  }

  /**
   * Checks the whole document on this thread first (a throwaway Brain), so a bad file changes
   * no shard, then gives each shard the agents the tick rule sends it.
   */
  async importState(state: unknown): Promise<number> {
    new Brain(this.bundle, { maxAgents: 1_000_000 }).importState(state);
    const doc = state as BrainState;
    const parts: BrainState[] = this.shards.map(() => ({ format: STATE_FORMAT, version: STATE_VERSION, agents: [] }));
    for (const a of doc.agents) parts[this.shardIndex(a.squad, a.id)]!.agents.push(a);
    const counts = await Promise.all(this.shards.map((s, i) => s.importState(parts[i]!)));
    return counts.reduce((x, y) => x + y, 0);
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

  async mapRoster(): Promise<MapSurvivor[]> {
    const parts = await Promise.all(this.shards.map((s) => s.mapRoster()));
    return parts.flat().sort((a, b) => a.agent - b.agent);
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
