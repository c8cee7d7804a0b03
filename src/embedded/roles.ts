/**
 * What one `serve` process does: `api` answers HTTP and runs no background loop, `worker`
 * runs the background jobs (render queue, webhook outbox, video callbacks, webhook log
 * retention) and answers only /health, `all` (the default) does both. A module of its own so
 * that the CLI checks `--role` without loading the server.
 */
export const ROLES = ['api', 'worker', 'all'] as const;
export type Role = (typeof ROLES)[number];
