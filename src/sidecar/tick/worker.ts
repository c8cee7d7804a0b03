/**
 * The sidecar's worker entry: the brain's worker (brain/worker.ts) plus what the sidecar
 * needs of a shard beyond ticks: the personas of flagged ticks for the dialogue tier (mapped
 * here, so only a few short strings cross the thread boundary) and brain state export/import
 * for the state file.
 */
import run, { currentBrain } from '../../../brain/worker.js';
import type { BrainState, MapSurvivor, TickRequest, WorkerReply, WorkerTask } from '../../../brain/index.js';
import { dialoguePersona, type DialoguePersona } from '../dialogue.js';

export type ShardTask =
  | Exclude<WorkerTask, { type: 'tick' }>
  /** `personas`: indices of the requests whose agent's persona goes back with the reply; `explain` as the brain's worker takes it. */
  | { type: 'tick'; requests: TickRequest[]; personas?: number[]; explain?: number[] }
  | { type: 'export' }
  | { type: 'import'; state: BrainState }
  /** The shard's roster with positions, for the live map's sample. */
  | { type: 'map' };

export type ShardReply =
  | Exclude<WorkerReply, { type: 'tick' }>
  | (Extract<WorkerReply, { type: 'tick' }> & { personas?: Array<[agent: number, persona: DialoguePersona]> })
  /** The shard's agents as JSON objects joined by commas ('' when none): a string crosses threads cheaply. */
  | { type: 'export'; text: string }
  | { type: 'import'; agents: number }
  | { type: 'map'; rows: MapSurvivor[] };

export default function shardRun(task: ShardTask): ShardReply {
  switch (task.type) {
    case 'export': {
      const b = currentBrain();
      return b
        ? {
            type: 'export',
            text: b
              .exportState()
              .agents.map((a) => JSON.stringify(a))
              .join(','),
          }
        : { type: 'no_bundle' };
    }
    case 'map': {
      const b = currentBrain();
      return b ? { type: 'map', rows: b.mapRoster() } : { type: 'no_bundle' };
    }
    case 'import': {
      const b = currentBrain();
      if (!b) return { type: 'no_bundle' };
      b.importState(task.state);
      return { type: 'import', agents: b.agentCount };
    }
    case 'tick': {
      const reply = run(
        task.explain === undefined ? { type: 'tick', requests: task.requests } : { type: 'tick', requests: task.requests, explain: task.explain },
      );
      const wanted = task.personas;
      if (reply.type !== 'tick' || wanted === undefined || wanted.length === 0) return reply;
      const b = currentBrain()!;
      const personas: Array<[number, DialoguePersona]> = [];
      for (const i of wanted) {
        const s = task.requests[i]!.snapshot;
        const p = b.persona(s.agent as number);
        if (p) personas.push([p.agent, dialoguePersona(p, s.time_s)]);
      }
      return { ...reply, personas };
    }
    default:
      return run(task);
  }
}
