/**
 * An attacker's pass over every tenant-scoped route: another tenant's session names this
 * tenant's ids. Every such request must be answered exactly as the same request naming ids
 * that exist nowhere (same status, same code: the answer does not tell that the resource
 * exists), never a success, and must change nothing. Driven from the server's route table, so
 * a route added later is covered without a list to keep.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { testImage } from '../video/helpers.js';
import { PAGE } from '../webhooks/conversations/setup.js';

/** Scopes of routes that no user credential speaks for (their own checks are tested with their services). */
const NOT_TENANT_SCOPED = new Set(['admin', 'server-key', 'public']);

test("another tenant's ids on every tenant-scoped route answer like ids that do not exist, and change nothing", { timeout: 120_000 }, async () => {
  const s = await startTestServer({ allowPrivateWebhooks: true });
  try {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    const call = (method: string, path: string, token: string, body?: unknown) => s.call(method, path, { token, ...(body !== undefined ? { body } : {}) });
    const made = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await s.call(method, path, { token: a.token, ...(body !== undefined ? { body } : {}), headers });
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };

    const server = await made('POST', '/v1/servers', { name: 'a' });
    const serverKey = await made('POST', `/v1/servers/${server.id}/keys`);
    const widget = await made('POST', '/v1/widgets', { name: 'a' });
    await made('PATCH', `/v1/widgets/${widget.id}`, { allowed_origins: [PAGE] });
    const widgetKey = await made('POST', `/v1/widgets/${widget.id}/keys`, { name: 'a' });
    const endpoint = await made('POST', `/v1/widgets/${widget.id}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['conversation.started'] });
    const started = await fetch(`${s.url}/v1/widgets/${widget.id}/conversations`, {
      method: 'POST',
      headers: { origin: PAGE, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(started.status, 201);
    const conversation = (await started.json()) as { conversation_id: string };
    const deliveries = await made('GET', `/v1/widgets/${widget.id}/webhooks/${endpoint.id}/deliveries`);
    const apiKey = await made('POST', '/v1/api-keys', { name: 'a' });
    const token = await made('POST', '/v1/tokens', { name: 'a', scopes: ['full'] });
    const property = await made('POST', '/v1/properties', { title: 'Flat', address: '1 Road', city: 'Paris', price: 1, currency: 'EUR', bedrooms: 1 });
    const photos = await made('POST', `/v1/properties/${property.id}/photos`, {
      photos: [{ filename: 'a.jpg', data_base64: testImage('jpg', '64x48').toString('base64') }],
    });
    const video = await made('POST', '/v1/videos', { property_id: property.id, template: 'tour', format: '1:1' });

    const ids: Record<string, string> = {
      servers: String(server.id),
      widgets: widget.id,
      properties: String(property.id),
      videos: String(video.id),
      'api-keys': String(apiKey.id),
      tokens: String(token.id),
      // Assets exist once a render finished; the first ones of this server are the tenant's.
      assets: '1',
      audio: '1',
      checkout: '1',
    };
    const nested: Record<string, string> = {
      keyId: String(serverKey.id),
      endpointId: String(endpoint.id),
      conversationId: conversation.conversation_id,
      deliveryId: String(deliveries.data[0]?.id ?? 1),
      photoId: String(photos.photos?.[0]?.id ?? photos.data?.[0]?.id ?? 1),
      version: '1',
    };
    // Widget keys share the :keyId name with server keys.
    const keyFor = (pattern: string) => (pattern.startsWith('/v1/widgets') ? String(widgetKey.id) : nested.keyId!);
    const nowhere = (name: string, real: string) =>
      real.startsWith('wid_')
        ? `wid_${'z'.repeat(real.length - 4)}`
        : real.startsWith('ses_')
          ? `ses_${'z'.repeat(real.length - 4)}`
          : name === 'version'
            ? '999'
            : '999999';
    const fill = (pattern: string, pick: (name: string, real: string) => string) =>
      pattern
        .split('/')
        .map((seg, i, all) => {
          if (!seg.startsWith(':')) return seg;
          const name = seg.slice(1);
          const real = name === 'id' ? (ids[all[i - 1]!] ?? '1') : name === 'keyId' ? keyFor(pattern) : (nested[name] ?? '1');
          return pick(name, real);
        })
        .join('/');

    const before = JSON.stringify(
      await Promise.all(
        [`/v1/servers/${server.id}/config`, `/v1/widgets/${widget.id}/webhooks`, `/v1/properties/${property.id}`].map(
          async (p) => (await call('GET', p, a.token)).body,
        ),
      ),
    );
    const problems: string[] = [];
    let compared = 0;
    for (const route of s.routes()) {
      if (!route.pattern.includes('/:')) continue;
      for (const method of route.methods) {
        const scope = route.scopes[method as keyof typeof route.scopes];
        if (method === 'HEAD' || method === 'OPTIONS' || scope === undefined || NOT_TENANT_SCOPED.has(scope)) continue;
        const body = method === 'GET' || method === 'DELETE' ? undefined : {};
        const theirs = await call(
          method,
          fill(route.pattern, (_, real) => real),
          b.token,
          body,
        );
        const none = await call(method, fill(route.pattern, nowhere), b.token, body);
        const what = `${method} ${route.pattern}`;
        compared++;
        if (theirs.status < 400) problems.push(`${what}: another tenant's resource answered ${theirs.status}`);
        else if (theirs.status !== none.status || theirs.body?.error?.code !== none.body?.error?.code)
          problems.push(`${what}: ${theirs.status} ${theirs.body?.error?.code} for another tenant's id, ${none.status} ${none.body?.error?.code} for none`);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(compared > 50, `only ${compared} routes compared`);
    const after = JSON.stringify(
      await Promise.all(
        [`/v1/servers/${server.id}/config`, `/v1/widgets/${widget.id}/webhooks`, `/v1/properties/${property.id}`].map(
          async (p) => (await call('GET', p, a.token)).body,
        ),
      ),
    );
    assert.equal(after, before);
    assert.equal((await call('GET', '/v1/auth/me', a.token)).status, 200);
  } finally {
    await s.stop();
  }
});
