/** Outbox → receiver scenarios: how many endpoints share the load, and the dispatcher's limits. */
export interface Scenario {
  name: string;
  endpoints: number;
  /** Deliveries in flight per endpoint (the production default is 4). */
  perEndpoint: number;
  /** Deliveries in flight overall (the production default is 64). */
  concurrency: number;
}

export const SCENARIOS: Scenario[] = [
  { name: '1 endpoint (default limits)', endpoints: 1, perEndpoint: 4, concurrency: 64 },
  { name: '1 endpoint, 64 in flight', endpoints: 1, perEndpoint: 64, concurrency: 64 },
  { name: '10 endpoints', endpoints: 10, perEndpoint: 4, concurrency: 64 },
  { name: '100 endpoints', endpoints: 100, perEndpoint: 4, concurrency: 64 },
];
