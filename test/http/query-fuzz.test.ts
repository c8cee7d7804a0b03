import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { embeddedTarget, faultLogger, fuzzQueries } from './field-fuzz-harness.js';

const SEED = Number(process.env.FIELD_FUZZ_SEED ?? 11);
const PER_ROUTE = Number(process.env.FIELD_FUZZ_PER_ROUTE ?? 12);
const RAISED = { limit: 1_000_000, windowMs: 60_000 };

test(`every GET route answers hostile query values in the error shape and changes nothing (seed ${SEED})`, async () => {
  const faults: string[] = [];
  const s = await startTestServer({
    allowPrivateWebhooks: true,
    logger: faultLogger(faults),
    limits: { session: RAISED, apiKey: RAISED, tenantApiKeys: RAISED, widgetVisitor: RAISED, widgetAddress: RAISED },
  });
  try {
    const { tenantId, token } = await tenantSession(s, 'enterprise');
    const ok = async (method: string, path: string, credential: string | undefined, body?: unknown) => {
      const r = await s.call(method, path, { ...(credential ? { token: credential } : {}), ...(body !== undefined ? { body } : {}) });
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const server = await ok('POST', '/v1/servers', token, { name: 'fuzz' });
    const apiKey = (await ok('POST', '/v1/api-keys', token, { name: 'fuzz' })).key as string;
    const widget = await ok('POST', '/v1/widgets', token, { name: 'fuzz' });
    const endpoint = await ok('POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: 'http://127.0.0.1:9/hook', events: ['lead.captured'] });
    const property = await ok('POST', '/v1/properties', apiKey, { address: '1 Road' });
    const conversation = await ok('POST', `/v1/widgets/${widget.id}/conversations`, undefined, {});
    const ids: Record<string, string> = {
      tenants: String(tenantId),
      servers: String(server.id),
      widgets: String(widget.id),
      properties: String(property.id),
      conversations: conversation.conversation_id,
    };
    const credential = (pattern: string): string => {
      if (pattern.startsWith('/v1/admin')) return ADMIN_TOKEN;
      if (pattern.startsWith('/v1/conversations')) return conversation.token;
      if (/^\/v1\/(properties|videos|assets|audio|branding|callback-secret)/.test(pattern)) return apiKey;
      return token;
    };
    const routes = s
      .routes()
      // The config pull and stream are signed requests (their queries are covered by the signed-pull tests); an event stream stays open.
      .filter((r) => r.methods.includes('GET') && !/^\/v1\/(config|telemetry)|\/events$/.test(r.pattern))
      .map((r) => ({
        method: 'GET',
        path: r.pattern
          .split('/')
          .map((seg, i, all) =>
            seg === ':id'
              ? (ids[all[i - 1] === 'tenants' ? 'tenants' : all[i - 1]!] ?? '1')
              : seg === ':endpointId'
                ? endpoint.id
                : seg.startsWith(':')
                  ? '1'
                  : seg === '*'
                    ? 'x'
                    : seg,
          )
          .join('/'),
        headers: () => ({ authorization: `Bearer ${credential(r.pattern)}` }),
      }));
    assert.ok(routes.length > 40, `only ${routes.length} routes`);
    const target = embeddedTarget(s);
    const problems = await fuzzQueries(target, routes, faults, { seed: SEED, perRoute: PER_ROUTE }).finally(() => target.close());
    assert.deepEqual(problems, []);
  } finally {
    await s.stop();
  }
});
