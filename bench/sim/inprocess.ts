import { Brain, parseTickRequest, type ConfigBundle } from '../../brain/index.js';
import type { TickTransport } from './engine.js';

/**
 * A transport that ticks a Brain in this process: the same validation and the same decisions
 * as the sidecar's /tick, without HTTP, for measurements that need a million ticks. Bad
 * requests answer 400 like the sidecar, so a simulator fault still fails the run. The brain
 * is exposed so a measurement can ask who a character is (its traits). `explain`: replies carry
 * `why`, as with the sidecar's `?explain=1`.
 */
export function inProcessTransport(bundle: ConfigBundle, explain = false): TickTransport & { brain: Brain } {
  const brain = new Brain(bundle);
  const send = (body: string): Promise<{ status: number; body: string }> => {
    const parsed = parseTickRequest(JSON.parse(body));
    if (!parsed.ok)
      return Promise.resolve({ status: 400, body: JSON.stringify({ error: { code: 'invalid_tick', message: 'invalid tick', details: parsed.problems } }) });
    return Promise.resolve({ status: 200, body: JSON.stringify(brain.tick(parsed.request, explain)) });
  };
  return Object.assign(send, { brain });
}
