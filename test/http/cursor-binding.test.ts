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
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, tenantSession, type TestServer } from '../helpers/embedded.js';
import { PAGE } from '../webhooks/conversations/setup.js';
import { createProperty, startVideoServer, testImage, waitForVideo } from '../video/helpers.js';

/** A list as one caller reads it: its path (with any filters) and the credential. */
interface ListRead {
  name: string;
  path: string;
  token: string;
}

type Call = TestServer['call'];

/** The cursor of the first page of a list read one item a page, from next_cursor or the Link header. */
async function firstCursor(call: Call, l: ListRead): Promise<string> {
  const r = await call('GET', `${l.path}${l.path.includes('?') ? '&' : '?'}limit=1`, { token: l.token });
  assert.equal(r.status, 200, `${l.name}: ${JSON.stringify(r.body)}`);
  // A bare array, and the drill-down (a tenant with one page of its servers), name the next page in a Link header.
  if (!('next_cursor' in r.body)) {
    const link = r.headers.get('link') ?? '';
    const m = /[?&]cursor=([^&>]+)/.exec(link);
    assert.ok(m, `${l.name}: a Link to the next page (${link})`);
    return decodeURIComponent(m[1]!);
  }
  assert.equal(typeof r.body.next_cursor, 'string', `${l.name}: a next_cursor`);
  return r.body.next_cursor as string;
}

function withCursor(l: ListRead, cursor: string, limit = 1): string {
  return `${l.path}${l.path.includes('?') ? '&' : '?'}limit=${limit}&cursor=${encodeURIComponent(cursor)}`;
}

async function refused(call: Call, l: ListRead, cursor: string, why: string): Promise<void> {
  const r = await call('GET', withCursor(l, cursor), { token: l.token });
  assert.equal(r.status, 400, `${why}: ${l.name} took it (${JSON.stringify(r.body)})`);
  assert.deepEqual(Object.keys(r.body), ['error'], why);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message'], why);
  assert.equal(r.body.error.code, 'bad_request', why);
}

const ok = (r: { status: number; body: unknown }, what: string, status = 201) => {
  assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
  return r.body as any;
};

test(
  'a cursor pages only the list it came from: another list, tenant, user, parent or filter answers 400 on every paginated route',
  { timeout: 300_000 },
  async () => {
    // Every list is read many times here: the rate limits are raised explicitly (they have tests of their own).
    const many = { limit: 100_000, windowMs: 60_000 };
    const s = await startVideoServer({ limits: { session: many, apiKey: many, tenantApiKeys: many } });
    const call = s.call.bind(s);
    try {
      const a = await tenantSession(s);
      const b = await tenantSession(s);
      // A second user of tenant A (its personal tokens are its own list).
      const email2 = `second-${Date.now()}@example.com`;
      ok(
        await call('POST', `/v1/admin/tenants/${a.tenantId}/users`, { token: ADMIN_TOKEN, body: { email: email2, password: 'correct horse battery' } }),
        'user',
      );
      const other = ok(await call('POST', '/v1/auth/login', { body: { email: email2, password: 'correct horse battery' } }), 'login', 200).token as string;

      const keyA = ok(await call('POST', '/v1/api-keys', { token: a.token, body: { name: 'one' } }), 'api key').key as string;
      ok(await call('POST', '/v1/api-keys', { token: a.token, body: { name: 'two' } }), 'api key');
      const keyB = ok(await call('POST', '/v1/api-keys', { token: b.token, body: { name: 'b' } }), 'api key').key as string;
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

      const properties = [];
      for (let i = 0; i < 2; i++) properties.push(await createProperty(s, keyA));
      const photo = { photos: [{ filename: 'a.png', data_base64: testImage('png').toString('base64') }] };
      for (const pid of properties) ok(await call('POST', `/v1/properties/${pid}/photos`, { token: keyA, body: photo }), 'photo');
      const videos = [];
      for (const pid of [properties[0], ...properties])
        videos.push(
          ok(await call('POST', '/v1/videos', { token: keyA, body: { property_id: pid, template: 'tour', format: '1:1' } }), 'video', 202).id as number,
        );
      for (const id of videos) assert.equal((await waitForVideo(s, keyA, id)).status, 'completed');
      const wav = join(s.dir, 'track.wav');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=22050:cl=mono', '-t', '1', wav]);
      for (let i = 0; i < 2; i++) {
        const r = await fetch(`${s.url}/v1/audio`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keyA}`, 'content-type': 'audio/wav' },
          body: readFileSync(wav),
        });
        assert.equal(r.status, 201, await r.text());
      }

      const d0 = `/v1/widgets/${widgets[0]}/webhooks/${endpoints[0]}/deliveries`;
      // Each list A reads, with the same list as someone else reads it (another tenant, user or parent): [A's, the foreign one].
      const lists: [ListRead, ListRead][] = [
        [
          { name: 'admin tenants', path: '/v1/admin/tenants', token: ADMIN_TOKEN },
          { name: "tenant A's servers (the drill-down)", path: `/v1/admin/tenants/${a.tenantId}`, token: ADMIN_TOKEN },
        ],
        [
          { name: 'admin drill-down', path: `/v1/admin/tenants/${a.tenantId}`, token: ADMIN_TOKEN },
          { name: "another tenant's drill-down", path: `/v1/admin/tenants/${b.tenantId}`, token: ADMIN_TOKEN },
        ],
        [
          { name: 'api keys', path: '/v1/api-keys', token: a.token },
          { name: "B's api keys", path: '/v1/api-keys', token: b.token },
        ],
        [
          { name: 'tokens', path: '/v1/tokens', token: a.token },
          { name: "another user's tokens", path: '/v1/tokens', token: other },
        ],
        [
          { name: 'servers', path: '/v1/servers', token: a.token },
          { name: "B's servers", path: '/v1/servers', token: b.token },
        ],
        [
          { name: 'server keys', path: `/v1/servers/${servers[0]}/keys`, token: a.token },
          { name: "B's server keys", path: `/v1/servers/${serverB}/keys`, token: b.token },
        ],
        [
          { name: 'config versions', path: `/v1/servers/${servers[0]}/config/versions`, token: a.token },
          { name: "another server's versions", path: `/v1/servers/${servers[1]}/config/versions`, token: a.token },
        ],
        [
          { name: 'widgets', path: '/v1/widgets', token: a.token },
          { name: "B's widgets", path: '/v1/widgets', token: b.token },
        ],
        [
          { name: 'widget keys', path: `/v1/widgets/${widgets[0]}/keys`, token: a.token },
          { name: "another widget's keys", path: `/v1/widgets/${widgets[1]}/keys`, token: a.token },
        ],
        [
          { name: 'endpoints', path: `/v1/widgets/${widgets[0]}/webhooks`, token: a.token },
          { name: "B's endpoints", path: `/v1/widgets/${widgetB}/webhooks`, token: b.token },
        ],
        [
          { name: 'deliveries', path: d0, token: a.token },
          { name: "another endpoint's deliveries", path: `/v1/widgets/${widgets[0]}/webhooks/${endpoints[1]}/deliveries`, token: a.token },
        ],
        [
          { name: 'conversations', path: `/v1/widgets/${widgets[0]}/conversations`, token: a.token },
          { name: "B's conversations", path: `/v1/widgets/${widgetB}/conversations`, token: b.token },
        ],
        [
          { name: 'properties', path: '/v1/properties', token: keyA },
          { name: "B's properties", path: '/v1/properties', token: keyB },
        ],
        [
          { name: 'videos', path: '/v1/videos', token: keyA },
          { name: "B's videos", path: '/v1/videos', token: keyB },
        ],
        [
          { name: 'assets', path: '/v1/assets', token: keyA },
          { name: "B's assets", path: '/v1/assets', token: keyB },
        ],
        [
          { name: 'audio', path: '/v1/audio', token: keyA },
          { name: "B's audio", path: '/v1/audio', token: keyB },
        ],
      ];

      const cursors = new Map<string, string>();
      for (const [own, foreign] of lists) {
        const cursor = await firstCursor(call, own);
        cursors.set(own.name, cursor);
        // The list that gave it takes it, whatever the page size.
        const next = await call('GET', withCursor(own, cursor, 2), { token: own.token });
        assert.equal(next.status, 200, `${own.name}: ${JSON.stringify(next.body)}`);
        await refused(call, foreign, cursor, `${own.name}'s cursor on ${foreign.name}`);
        // A character changed anywhere is no cursor, whichever list reads it.
        for (let i = 0; i < cursor.length; i += 5) {
          const flipped = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
          await refused(call, own, flipped, `${own.name}'s cursor changed at ${i}`);
        }
      }
      // Every list refuses every other list's cursor.
      for (const [own] of lists)
        for (const [from] of lists) if (from.name !== own.name) await refused(call, own, cursors.get(from.name)!, `${from.name}'s cursor`);

      // Filters: a cursor is bound to the filters its page was read with; an empty filter is the filter not given.
      const filtered: [ListRead, string[]][] = [
        [
          { name: 'videos of p0', path: `/v1/videos?property_id=${properties[0]}&status=`, token: keyA },
          ['/v1/videos', `/v1/videos?property_id=${properties[1]}`, `/v1/videos?property_id=${properties[0]}&status=completed`],
        ],
        [{ name: 'completed videos', path: '/v1/videos?status=completed', token: keyA }, ['/v1/videos?status=failed', '/v1/videos']],
        [
          { name: 'assets of v0', path: `/v1/assets?video_id=${videos[0]}`, token: keyA },
          ['/v1/assets', `/v1/assets?video_id=${videos[1]}`, `/v1/assets?video_id=${videos[0]}&property_id=${properties[0]}`],
        ],
        [{ name: 'unfiltered assets', path: '/v1/assets?property_id=', token: keyA }, [`/v1/assets?property_id=${properties[0]}`]],
        [{ name: 'deliveries', path: d0, token: a.token }, [`${d0}?status=pending`, `${d0}?status=failed`]],
        [
          { name: 'open conversations', path: `/v1/widgets/${widgets[0]}/conversations?status=open`, token: a.token },
          [`/v1/widgets/${widgets[0]}/conversations`],
        ],
      ];
      for (const [own, others] of filtered) {
        const cursor = await firstCursor(call, own);
        assert.equal((await call('GET', withCursor(own, cursor), { token: own.token })).status, 200, own.name);
        const bare = own.path.replace(/[?&][a-z_]+=(?=&|$)/g, '');
        if (bare !== own.path)
          assert.equal(
            (await call('GET', withCursor({ ...own, path: bare }, cursor), { token: own.token })).status,
            200,
            `${own.name} without its empty filter`,
          );
        for (const path of others) await refused(call, { ...own, path }, cursor, `${own.name}'s cursor on ${path}`);
      }

      // A cursor of the earlier form (a position alone) names no list: 400, never a page.
      await refused(call, lists[12]![0], Buffer.from('v1:1').toString('base64url'), 'a v1 cursor');
    } finally {
      await s.stop();
    }
  },
);
