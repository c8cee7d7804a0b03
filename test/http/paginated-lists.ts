import { serverWithKey } from '../controlplane/helpers.js';
import { tenantSession } from '../helpers/embedded.js';
import { apiKey, startVideoServer } from '../video/helpers.js';

/**
 * A server with the property-video API and the control plane, and one paginated list of each
 * kind with the credential that reads it: the video lists (API key) and a server's activity
 * feed (session token).
 */
export async function withPaginatedLists() {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const lists = [
      [key, '/v1/properties'],
      [key, '/v1/assets'],
      [token, `/v1/servers/${serverId}/activity`],
    ] as const;
    return { s, key, token, lists };
  } catch (err) {
    await s.stop();
    throw err;
  }
}
