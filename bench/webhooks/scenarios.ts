import type { SignatureScheme } from '../../src/webhooks/types.js';
import { DELIVERY_CONCURRENCY as ALL, DELIVERY_CONCURRENCY_PER_ENDPOINT as EACH } from '../../src/webhooks/schedule.js';

/** Outbox → receiver scenarios: how many endpoints share the load, the dispatcher's limits, and what is switched on. */
export interface Scenario {
  name: string;
  endpoints: number;
  /** Deliveries in flight per endpoint (the production default is DELIVERY_CONCURRENCY_PER_ENDPOINT). */
  perEndpoint: number;
  /** Deliveries in flight overall (the production default is DELIVERY_CONCURRENCY). */
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
  { name: '1 endpoint (default limits)', endpoints: 1, perEndpoint: EACH, concurrency: ALL },
  { name: '1 endpoint, 64 in flight', endpoints: 1, perEndpoint: ALL, concurrency: ALL },
  { name: '10 endpoints', endpoints: 10, perEndpoint: EACH, concurrency: ALL },
  { name: '100 endpoints', endpoints: 100, perEndpoint: EACH, concurrency: ALL },
  { name: '10 endpoints, order off', endpoints: 10, perEndpoint: EACH, concurrency: ALL, ordered: false },
  { name: '10 endpoints, 10% first attempts fail, order on', endpoints: 10, perEndpoint: EACH, concurrency: ALL, failFirst: 0.1 },
  { name: '10 endpoints, 10% first attempts fail, order off', endpoints: 10, perEndpoint: EACH, concurrency: ALL, failFirst: 0.1, ordered: false },
  { name: '10 endpoints, v1a', endpoints: 10, perEndpoint: EACH, concurrency: ALL, scheme: 'v1a' },
];
