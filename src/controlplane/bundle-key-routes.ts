import type { HttpServer } from '../http/server.js';
import { json } from '../http/reply.js';
import type { ControlPlaneContext } from './context.js';

/**
 * `GET /v1/config/keys`: the installation's bundle-signing public keys, oldest first, each
 * endorsed by the one before it (see src/signing/bundle.ts). Public: they prove, they do not
 * grant; a sidecar reads them to follow a rotation from the key it pinned.
 */
export function mountBundleKeyRoutes(server: HttpServer, ctx: ControlPlaneContext): void {
  const anyone = server.scoped('public');
  anyone.get(
    '/v1/config/keys',
    async () => {
      await ctx.signer.ready();
      return json(200, { keys: ctx.signer.keys() }, { 'cache-control': 'no-cache' });
    },
    { headers: [] },
  );
}
