import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import type { EmbeddedOptions } from '../../src/embedded/start.js';

export interface Clock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** A clock tests move by hand; starts at the real time so Standard Webhooks' own tolerance check passes. */
export function testClock(start = Date.now()): Clock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms), set: (ms) => void (t = ms) };
}

/** A server with private webhooks allowed, a tenant session and one widget. */
export async function webhookServer(options: Partial<EmbeddedOptions> = {}) {
  const s: TestServer = await startTestServer({ allowPrivateWebhooks: true, ...options });
  const { token, email } = await tenantSession(s);
  const w = await s.call('POST', '/v1/widgets', { token, body: { name: 'Support widget' } });
  if (w.status !== 201) throw new Error(`create widget: ${w.status} ${JSON.stringify(w.body)}`);
  const addEndpoint = async (body: Record<string, unknown>) => {
    const r = await s.call('POST', `/v1/widgets/${w.body.id}/webhooks`, { token, body });
    if (r.status !== 201) throw new Error(`create endpoint: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string; secret: string; url: string };
  };
  const post = (event: string, data: Record<string, unknown>) => s.call('POST', `/v1/widgets/${w.body.id}/events`, { token, body: { event, data } });
  return { s, token, email, widgetId: w.body.id as string, widgetKey: w.body.key as string, addEndpoint, post };
}

export const LEAD = { conversation_id: 'ses_abc123', visitor_id: 'vis_42', has_email: true, has_phone: false };
