/**
 * Regression: a list's cursor named only a position, so a cursor from one list was taken by
 * any other: one tenant's properties cursor paged another tenant's properties, a deliveries
 * cursor paged the conversations, a `?status=failed` cursor paged the unfiltered list, each a
 * silently wrong page. A cursor is bound to the list it came from (its route, whose list it
 * is, its path parameters, its filters) now; any other list answers it 400 bad_request, on
 * every paginated route of every service.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { PAGE } from '../webhooks/conversations/setup.js';
import { checkFilters, checkLists, ok, pagedLists, refused, VIDEO_LISTS, type ListRead } from './cursor-binding-kit.js';

test('a cursor pages only the list it came from: another list, tenant, user, parent or filter answers 400 (control plane, identity, widgets, webhooks)', async () => {
  // Every list is read many times here: the rate limits are raised explicitly (they have tests of their own).
  const many = { limit: 100_000, windowMs: 60_000 };
  const s = await startTestServer({ allowPrivateWebhooks: true, limits: { session: many } });
  const call = s.call.bind(s);
  try {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    // A second user of tenant A (its personal tokens are its own list).
    const email2 = `second-${Date.now()}@example.com`;
    ok(await call('POST', `/v1/admin/tenants/${a.tenantId}/users`, { token: ADMIN_TOKEN, body: { email: email2, password: 'correct horse battery' } }), 'user');
    const other = ok(await call('POST', '/v1/auth/login', { body: { email: email2, password: 'correct horse battery' } }), 'login', 200).token as string;

    ok(await call('POST', '/v1/api-keys', { token: a.token, body: { name: 'one' } }), 'api key');
    ok(await call('POST', '/v1/api-keys', { token: a.token, body: { name: 'two' } }), 'api key');
    for (const t of [a.token, a.token, other])
      ok(await call('POST', '/v1/tokens', { token: t, body: { name: 'ci', scopes: ['config:read'] } }), 'personal token');

    const servers = [];
    for (let i = 0; i < 2; i++) servers.push(ok(await call('POST', '/v1/servers', { token: a.token, body: { name: `s${i}` } }), 'server').id as number);
    const serverB = ok(await call('POST', '/v1/servers', { token: b.token, body: { name: 'b' } }), 'server').id as number;
    ok(await call('POST', '/v1/servers', { token: b.token, body: { name: 'b2' } }), 'server');
    for (const sid of [servers[0], servers[0], serverB])
      ok(await call('POST', `/v1/servers/${sid}/keys`, { token: sid === serverB ? b.token : a.token }), 'server key');
    ok(await call('POST', `/v1/servers/${servers[0]}/config/rollback`, { token: a.token, body: { version: 1 } }), 'rollback', 200);

    const widgets = [];
    for (let i = 0; i < 2; i++) widgets.push(ok(await call('POST', '/v1/widgets', { token: a.token, body: { name: `w${i}` } }), 'widget').id as string);
    const widgetB = ok(await call('POST', '/v1/widgets', { token: b.token, body: { name: 'b' } }), 'widget').id as string;
    ok(await call('POST', `/v1/widgets/${widgets[0]}/keys`, { token: a.token }), 'widget key');
    ok(await call('PATCH', `/v1/widgets/${widgets[0]}`, { token: a.token, body: { allowed_origins: [PAGE] } }), 'widget origins', 200);
    const hook = { url: 'http://127.0.0.1:9/hook', events: ['lead.captured'] };
    const endpoints = [];
    for (let i = 0; i < 2; i++)
      endpoints.push(ok(await call('POST', `/v1/widgets/${widgets[0]}/webhooks`, { token: a.token, body: hook }), 'endpoint').id as string);
    for (let i = 0; i < 2; i++) {
      const data = { conversation_id: `ses_${i}`, visitor_id: 'vis_1', has_email: false, has_phone: false };
      ok(await call('POST', `/v1/widgets/${widgets[0]}/events`, { token: a.token, body: { event: 'lead.captured', data } }), 'event', 202);
    }
    for (let i = 0; i < 2; i++) ok(await call('POST', `/v1/widgets/${widgets[0]}/conversations`, { body: {}, headers: { origin: PAGE } }), 'conversation');

    const d0 = `/v1/widgets/${widgets[0]}/webhooks/${endpoints[0]}/deliveries`;
    // Each list A reads, with the same list as someone else reads it (another tenant, user or parent): [A's, the foreign one].
    const lists: [ListRead, ListRead][] = [
      [
        { list: 'tenants', name: 'admin tenants', path: '/v1/admin/tenants', token: ADMIN_TOKEN },
        { name: "tenant A's servers (the drill-down)", path: `/v1/admin/tenants/${a.tenantId}`, token: ADMIN_TOKEN },
      ],
      [
        { list: 'tenant-servers', name: 'admin drill-down', path: `/v1/admin/tenants/${a.tenantId}`, token: ADMIN_TOKEN },
        { name: "another tenant's drill-down", path: `/v1/admin/tenants/${b.tenantId}`, token: ADMIN_TOKEN },
      ],
      [
        { list: 'api-keys', name: 'api keys', path: '/v1/api-keys', token: a.token },
        { name: "B's api keys", path: '/v1/api-keys', token: b.token },
      ],
      [
        { list: 'tokens', name: 'tokens', path: '/v1/tokens', token: a.token },
        { name: "another user's tokens", path: '/v1/tokens', token: other },
      ],
      [
        { list: 'servers', name: 'servers', path: '/v1/servers', token: a.token },
        { name: "B's servers", path: '/v1/servers', token: b.token },
      ],
      [
        { list: 'server-keys', name: 'server keys', path: `/v1/servers/${servers[0]}/keys`, token: a.token },
        { name: "B's server keys", path: `/v1/servers/${serverB}/keys`, token: b.token },
      ],
      [
        { list: 'config-versions', name: 'config versions', path: `/v1/servers/${servers[0]}/config/versions`, token: a.token },
        { name: "another server's versions", path: `/v1/servers/${servers[1]}/config/versions`, token: a.token },
      ],
      [
        { list: 'widgets', name: 'widgets', path: '/v1/widgets', token: a.token },
        { name: "B's widgets", path: '/v1/widgets', token: b.token },
      ],
      [
        { list: 'widget-keys', name: 'widget keys', path: `/v1/widgets/${widgets[0]}/keys`, token: a.token },
        { name: "another widget's keys", path: `/v1/widgets/${widgets[1]}/keys`, token: a.token },
      ],
      [
        { list: 'endpoints', name: 'endpoints', path: `/v1/widgets/${widgets[0]}/webhooks`, token: a.token },
        { name: "B's endpoints", path: `/v1/widgets/${widgetB}/webhooks`, token: b.token },
      ],
      [
        { list: 'deliveries', name: 'deliveries', path: d0, token: a.token },
        { name: "another endpoint's deliveries", path: `/v1/widgets/${widgets[0]}/webhooks/${endpoints[1]}/deliveries`, token: a.token },
      ],
      [
        { list: 'conversations', name: 'conversations', path: `/v1/widgets/${widgets[0]}/conversations`, token: a.token },
        { name: "B's conversations", path: `/v1/widgets/${widgetB}/conversations`, token: b.token },
      ],
    ];

    // Every paginated route of every service is checked, here or in cursor-binding-video.test.ts.
    assert.deepEqual(pagedLists(), [...lists.map(([own]) => own.list!), ...VIDEO_LISTS].sort());
    await checkLists(call, lists);
    await checkFilters(call, [
      [{ name: 'deliveries', path: d0, token: a.token }, [`${d0}?status=pending`, `${d0}?status=failed`]],
      [
        { name: 'open conversations', path: `/v1/widgets/${widgets[0]}/conversations?status=open`, token: a.token },
        [`/v1/widgets/${widgets[0]}/conversations`],
      ],
    ]);
    // A cursor of the earlier form (a position alone) names no list: 400, never a page.
    await refused(call, lists[0]![0], Buffer.from('v1:1').toString('base64url'), 'a v1 cursor');
  } finally {
    await s.stop();
  }
});
