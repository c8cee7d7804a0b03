import type { HttpServer } from '../http/server.js';
import { json } from '../http/reply.js';
import { limitParam } from '../http/validate.js';
import { ownedServer, type ControlPlaneContext } from './context.js';
import { economy, overview, usageSummary } from './read-models.js';
import { CONNECTED_WITHIN_MS } from './connections.js';
import { MAP_LIMITS } from './telemetry.js';

export const ACTIVITY_LIMIT = { default: 20, max: 100 } as const;

/** Spec 001 §4.3 read models over the stored telemetry. */
export function mountReadRoutes(server: HttpServer, ctx: ControlPlaneContext): void {
  const { store } = ctx;
  const full = server.scoped('full');

  full.get('/v1/servers/:id/overview', async (req) => {
    const { server: s } = await ownedServer(ctx, req);
    return json(200, await overview(store, s.id, ctx.now()));
  });

  full.get('/v1/servers/:id/roster', async (req) => {
    const { server: s } = await ownedServer(ctx, req);
    const [roster, latest] = await Promise.all([store.roster(s.id), store.latestReport(s.id)]);
    // Each character carries when it was last reported and whether that is too long ago to
    // trust its state: a sidecar that went away leaves its last roster behind, which must not
    // read as characters still engaging minutes later.
    const seenAt = latest ? new Date(latest.receivedAt).toISOString() : null;
    const stale = latest ? ctx.now() - latest.receivedAt > CONNECTED_WITHIN_MS : true;
    return json(
      200,
      roster.map((r) => ({ ...r, seenAt, stale })),
    );
  });

  // The dashboard's live map (not in the spec, which keeps /roster to Survivor[]): the latest
  // sample of characters with positions that the sidecar sends with its telemetry.
  full.get('/v1/servers/:id/map', async (req) => {
    const { server: s } = await ownedServer(ctx, req);
    const sample = await store.mapSample(s.id);
    return json(200, {
      ts: sample?.ts ?? null,
      receivedAt: sample ? new Date(sample.receivedAt).toISOString() : null,
      stale: sample ? ctx.now() - sample.receivedAt > CONNECTED_WITHIN_MS : true,
      minIntervalS: MAP_LIMITS.minIntervalMs / 1000,
      characters: sample?.characters ?? [],
    });
  });

  full.get('/v1/servers/:id/activity', async (req) => {
    const { server: s } = await ownedServer(ctx, req);
    const limit = limitParam(req, ACTIVITY_LIMIT.default, ACTIVITY_LIMIT.max);
    return json(200, await store.activity(s.id, limit));
  });

  full.get('/v1/servers/:id/economy', async (req) => {
    const { server: s } = await ownedServer(ctx, req);
    return json(200, await economy(store, s.id, ctx.now()));
  });

  full.get('/v1/servers/:id/usage', async (req) => {
    const { server: s } = await ownedServer(ctx, req);
    return json(200, await usageSummary(store, s.id, ctx.now()));
  });
}
