// What the store-only benches (store-cost, pg-cost) do between a claim and a record, as the
// dispatcher does it without a network: every claimed delivery succeeds at once.

/** A claimed delivery as these benches keep it. */
export interface Held {
  id: string;
  endpointId: string;
}

/** Counts claimed deliveries in flight per endpoint (the claim's `busy`). */
export function holdClaimed(busy: Map<string, number>, got: readonly Held[]): void {
  for (const d of got) busy.set(d.endpointId, (busy.get(d.endpointId) ?? 0) + 1);
}

/** The results of finished deliveries, each a first attempt answered 204, and their slots freed in `busy`. */
export function succeed(busy: Map<string, number>, finished: readonly Held[]) {
  for (const d of finished) {
    const n = busy.get(d.endpointId)! - 1;
    if (n) busy.set(d.endpointId, n);
    else busy.delete(d.endpointId);
  }
  return finished.map((d) => ({
    deliveryId: d.id,
    endpointId: d.endpointId,
    attempt: { startedAt: Date.now(), durationMs: 1, statusCode: 204, responseExcerpt: '', error: null, outcome: 'succeeded' },
    next: { status: 'succeeded' },
    endpoint: 'success',
  }));
}
