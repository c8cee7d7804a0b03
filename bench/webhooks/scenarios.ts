import type { SignatureScheme } from '../../src/webhooks/types.js';

/** Outbox → receiver scenarios: how many endpoints share the load, the dispatcher's limits, and what is switched on. */
export interface Scenario {
  name: string;
  endpoints: number;
  /** Deliveries in flight per endpoint (the production default is 4). */
  perEndpoint: number;
  /** Deliveries in flight overall (the production default is 64). */
  concurrency: number;
  /** Per-conversation order (the production default, ORDER_HOLD_MS); false turns it off. */
  ordered?: boolean;
  /** The fraction of first attempts the receiver answers 503 (retried after RETRY_MS). */
  failFirst?: number;
  /** Every endpoint's signature scheme (default hmac). */
  scheme?: SignatureScheme;
}

/** Events per conversation in the scenarios: each conversation's deliveries must arrive in this order. */
export const EVENTS_PER_CONVERSATION = 4;
/** The retry delay of the failing scenarios (production waits 5 s first; the bench measures the outbox, not the wait). */
export const RETRY_MS = 20;

export const SCENARIOS: Scenario[] = [
  { name: '1 endpoint (default limits)', endpoints: 1, perEndpoint: 4, concurrency: 64 },
  { name: '1 endpoint, 64 in flight', endpoints: 1, perEndpoint: 64, concurrency: 64 },
  { name: '10 endpoints', endpoints: 10, perEndpoint: 4, concurrency: 64 },
  { name: '100 endpoints', endpoints: 100, perEndpoint: 4, concurrency: 64 },
  { name: '10 endpoints, order off', endpoints: 10, perEndpoint: 4, concurrency: 64, ordered: false },
  { name: '10 endpoints, 10% first attempts fail, order on', endpoints: 10, perEndpoint: 4, concurrency: 64, failFirst: 0.1 },
  { name: '10 endpoints, 10% first attempts fail, order off', endpoints: 10, perEndpoint: 4, concurrency: 64, failFirst: 0.1, ordered: false },
  { name: '10 endpoints, v1a', endpoints: 10, perEndpoint: 4, concurrency: 64, scheme: 'v1a' },
];
