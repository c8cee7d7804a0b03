import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A claim on a background job (a webhook delivery, a render, a callback): who holds it and
 * for how long. Replicas sharing a database never take a job while another's lease on it
 * runs; a lease that runs out (its holder died) makes the job claimable again.
 */
export interface Lease {
  owner: string;
  ms: number;
}

/** Names one worker's claims: the host and pid say where it ran, the suffix tells runs apart. */
export function leaseOwner(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}
