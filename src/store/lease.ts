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

/**
 * The shortest lease a server accepts (`--job-lease`): longer than the 10 s an outbound
 * delivery may take, with room for the address lookup and writing the result.
 */
export const MIN_LEASE_MS = 15_000;
/** The longest: a dead replica's jobs wait at most this long for another. */
export const MAX_LEASE_MS = 3_600_000;

/** Names one worker's claims: the host and pid say where it ran, the suffix tells runs apart. */
export function leaseOwner(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}
