import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { silentLogger } from '../../src/log.js';
import { PlayerTracker, RecentAgents } from '../../src/sidecar/state/players.js';
import { TickBatch } from '../../src/sidecar/tick/batch.js';
import { InlineEvaluator } from '../../src/sidecar/tick/evaluator.js';
import { TickHandler } from '../../src/sidecar/tick/handler.js';

/**
 * The POST /ticks path as the inline sidecar wires it, without the transport: a JSON batch
 * body read (with the telemetry's player and roster tracking), decided and written into the
 * group's reply. The body is read synchronously and may be reused once this returns.
 */
export function ticksPath(): (body: Buffer) => void {
  const players = new PlayerTracker();
  const recent = new RecentAgents();
  const handler = new TickHandler(new InlineEvaluator(DEFAULT_BUNDLE), {
    observe: (r) => {
      players.observe(r);
      recent.add(r.snapshot.agent);
    },
  });
  const batch = TickBatch.of(handler);
  return (body) => batch.answerGroup(handler.acceptBatch(body, 'json'), 'json', silentLogger);
}
