/**
 * `?explain=1` on /tick and /ticks: every reply of the request then carries `why` (the brain's
 * mode, goal, the top options it scored and the rule that decided; see docs/sidecar.md). Read
 * as `?errors=` is: only the exact value `1` (percent-encoded too) turns it on, any other value
 * or none leaves the replies as they are. A tick without a query pays nothing; one with a
 * query that does not name `explain=` one substring search.
 */
export const EXPLAIN_PARAM = 'explain';
/** The one value that turns it on. */
export const EXPLAIN_ON = '1';

/** Whether a request asks for explanations; `query` is the raw query string without '?' (undefined or '' when there is none). */
export function explainOf(query: string | undefined): boolean {
  if (query === undefined || query.length === 0 || !query.includes('explain=')) return false;
  // A proper parse decides: `xexplain=1` or `explain=10` do not count, `explain=%31` does.
  return new URLSearchParams(query).get(EXPLAIN_PARAM) === EXPLAIN_ON;
}
