/**
 * The piscina worker entry: one Brain per worker thread. The sidecar shards agents to fixed
 * single-thread pools, so every agent's state lives in exactly one worker and the tasks of a
 * pool run in the order they were queued (bundle changes included).
 */
import { Brain } from './brain.js';
import type { ConfigBundle, Survivor, TickRequest, TickResponse } from './types.js';

export interface WorkerTelemetry {
  events: Record<string, number>;
  roster: Survivor[];
  agents: number;
}

export type WorkerTask =
  | { type: 'bundle'; bundle: ConfigBundle; maxAgents?: number }
  /** `explain`: indices (ascending) of the requests whose reply carries `why`. */
  | { type: 'tick'; requests: TickRequest[]; explain?: number[] }
  | { type: 'drain' };

export type WorkerReply =
  | { type: 'bundle'; version: number }
  /** A tick that threw leaves null in responses and its message in failures; the rest of the batch stands. */
  | { type: 'tick'; responses: (TickResponse | null)[]; failures: { index: number; message: string }[] }
  | { type: 'drain'; telemetry: WorkerTelemetry }
  /** This thread has no bundle yet: piscina replaced a thread that died. The sender resends the bundle, then the task. */
  | { type: 'no_bundle' };

let brain: Brain | null = null;

/** This thread's Brain, once it has a bundle: for a wrapping worker entry that adds tasks. */
export function currentBrain(): Brain | null {
  return brain;
}

export default function run(task: WorkerTask): WorkerReply {
  switch (task.type) {
    case 'bundle':
      if (brain) brain.setBundle(task.bundle);
      else brain = new Brain(task.bundle, task.maxAgents === undefined ? {} : { maxAgents: task.maxAgents });
      return { type: 'bundle', version: brain.version };
    case 'tick': {
      const b = brain;
      if (!b) return { type: 'no_bundle' };
      const responses: (TickResponse | null)[] = new Array(task.requests.length);
      const failures: { index: number; message: string }[] = [];
      const explain = task.explain;
      let next = 0;
      for (let i = 0; i < task.requests.length; i++) {
        const explained = explain !== undefined && explain[next] === i;
        if (explained) next++;
        try {
          responses[i] = b.tick(task.requests[i]!, explained);
        } catch (err) {
          responses[i] = null;
          failures.push({ index: i, message: err instanceof Error ? err.message : String(err) });
        }
      }
      return { type: 'tick', responses, failures };
    }
    case 'drain': {
      const b = brain;
      if (!b) return { type: 'no_bundle' };
      return { type: 'drain', telemetry: { events: b.drainEvents(), roster: b.roster(), agents: b.agentCount } };
    }
  }
}
