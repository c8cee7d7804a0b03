/**
 * `GET /v1/admin/tenants` and `GET /v1/servers/{id}/config/versions` answered every row at once
 * and ignored `?limit=` and `?cursor=`: a list that grows with every tenant and every publish,
 * unbounded. Their bodies stay the bare arrays the specification shows (Tenant[],
 * ConfigVersion[]); they take `?limit=` (1–100) and `?cursor=` as every list does, 100 when no
 * limit is given (a client that knows nothing of pages gets as much as any page holds), and
 * name the next page in a `Link: <…>; rel="next"` header.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ARRAY_PAGE_LIMIT } from '../../src/http/pagination.js';
import { ADMIN_TOKEN, startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';

const BAD_LIMITS = ['0', '-1', '101', '1.5', '1e1', 'abc', '+5', ' 5', '0x10', '99999999999999999999'];

/** Follows the Link header from `path` to the end; every page's items, page by page. */
async function walk(s: TestServer, path: string, token: string): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  let next: string | null = path;
  while (next !== null) {
    const r = await s.call('GET', next, { token });
    assert.equal(r.status, 200, `${next}: ${JSON.stringify(r.body)}`);
    assert.ok(Array.isArray(r.body), 'the body is the bare array');
    pages.push(r.body);
    const link = r.headers.get('link');
    next = link === null ? null : /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
    assert.ok(pages.length < 50);
  }
  return pages;
}

async function refusesBadPaging(s: TestServer, path: string, token: string, before: unknown): Promise<void> {
  for (const limit of BAD_LIMITS) {
    const r = await s.call('GET', `${path}?limit=${encodeURIComponent(limit)}`, { token });
    assert.equal(r.status, 400, `limit=${limit}`);
    assert.equal(r.body.error.code, 'bad_request');
    assert.match(r.body.error.message, /limit must be an integer from 1 to 100/);
  }
  for (const cursor of ['x', '0', 'djE6MDA3', Buffer.from('v1:-1').toString('base64url'), '%00']) {
    const r = await s.call('GET', `${path}?cursor=${cursor}`, { token });
    assert.equal(r.status, 400, `cursor=${cursor}`);
    assert.equal(r.body.error.code, 'bad_request');
  }
  assert.equal((await s.call('GET', `${path}?limit=1&limit=2`, { token })).status, 400, 'limit given twice');
  assert.deepEqual((await s.call('GET', path, { token })).body, before, 'nothing changed');
}

test('admin tenants: 100 a page by default, ?limit= 1–100, the next page in a Link header, bad limits and cursors 400', async () => {
  const s = await startTestServer();
  try {
    const n = ARRAY_PAGE_LIMIT.default + 5;
    for (let i = 0; i < n; i++) {
      const r = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: { name: `t${i}`, plan: 'pro' } });
      assert.equal(r.status, 201);
    }
    const first = await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN });
    assert.equal(first.body.length, ARRAY_PAGE_LIMIT.default);
    assert.match(first.headers.get('link') ?? '', /^<\/v1\/admin\/tenants\?cursor=[A-Za-z0-9_-]+>; rel="next"$/);
    const rest = await s.call('GET', /^<([^>]+)>/.exec(first.headers.get('link')!)![1]!, { token: ADMIN_TOKEN });
    assert.equal(rest.body.length, 5);
    assert.equal(rest.headers.get('link'), null, 'the last page names no next one');
    const pages = await walk(s, '/v1/admin/tenants?limit=30', ADMIN_TOKEN);
    assert.deepEqual(
      pages.map((p) => p.length),
      [30, 30, 30, 15],
    );
    assert.deepEqual(
      pages.flat().map((t: any) => t.name),
      Array.from({ length: n }, (_, i) => `t${i}`),
      'every tenant once, by id',
    );
    assert.equal(
      (await s.call('GET', `/v1/admin/tenants?limit=5&cursor=${/cursor=([^>&]+)/.exec(first.headers.get('link')!)![1]}`, { token: ADMIN_TOKEN })).body.length,
      5,
    );
    await refusesBadPaging(s, '/v1/admin/tenants', ADMIN_TOKEN, first.body);
    assert.equal((await s.call('GET', '/v1/admin/tenants?limit=1')).status, 401, 'the admin token first');
  } finally {
    await s.stop();
  }
});

test('config versions: newest first, all of them (up to 100) by default, ?limit= and ?cursor=, Link to the older ones, bad paging 400', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'enterprise');
    const server = await s.call('POST', '/v1/servers', { token, body: { name: 'alpha' } });
    const id = server.body.id as number;
    let head = await s.call('GET', `/v1/servers/${id}/config`, { token });
    for (let i = 0; i < 24; i++) {
      const put = await s.call('PUT', `/v1/servers/${id}/config`, { token, body: head.body });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      head = put;
    }
    const path = `/v1/servers/${id}/config/versions`;
    const first = await s.call('GET', path, { token });
    assert.deepEqual(
      first.body.map((v: any) => v.version),
      Array.from({ length: 25 }, (_, i) => 25 - i),
    );
    assert.equal(first.headers.get('link'), null);
    const pages = await walk(s, `${path}?limit=10`, token);
    assert.deepEqual(
      pages.map((p) => p.map((v: any) => v.version)),
      [
        [25, 24, 23, 22, 21, 20, 19, 18, 17, 16],
        [15, 14, 13, 12, 11, 10, 9, 8, 7, 6],
        [5, 4, 3, 2, 1],
      ],
    );
    await refusesBadPaging(s, path, token, first.body);
    // Another tenant's server is not found, whatever the paging.
    const other = await tenantSession(s);
    assert.equal((await s.call('GET', `${path}?limit=5`, { token: other.token })).status, 404);
  } finally {
    await s.stop();
  }
});

test('the key lists (server keys, API keys, personal tokens) keep every revoked key, so they are paged the same way', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'enterprise');
    const server = await s.call('POST', '/v1/servers', { token, body: { name: 'alpha' } });
    const id = server.body.id as number;
    for (let i = 0; i < 23; i++) {
      const key = await s.call('POST', `/v1/servers/${id}/keys`, { token });
      assert.equal(key.status, 201, JSON.stringify(key.body));
      assert.equal((await s.call('DELETE', `/v1/servers/${id}/keys/${key.body.id}`, { token })).status, 204);
      const api = await s.call('POST', '/v1/api-keys', { token, body: { name: `k${i}` } });
      assert.equal(api.status, 201, JSON.stringify(api.body));
      assert.equal((await s.call('DELETE', `/v1/api-keys/${api.body.id}`, { token })).status, 204);
      const pat = await s.call('POST', '/v1/tokens', { token, body: { name: `t${i}`, scopes: ['config:read'] } });
      assert.equal(pat.status, 201, JSON.stringify(pat.body));
      assert.equal((await s.call('DELETE', `/v1/tokens/${pat.body.id}`, { token })).status, 204);
    }
    for (const [path, order] of [
      [`/v1/servers/${id}/keys`, 'ascending'],
      ['/v1/api-keys', 'ascending'],
      ['/v1/tokens', 'descending'],
    ] as const) {
      const first = await s.call('GET', path, { token });
      assert.equal(first.body.length, 23, path);
      const pages = await walk(s, `${path}?limit=10`, token);
      assert.deepEqual(
        pages.map((p) => p.length),
        [10, 10, 3],
        path,
      );
      const ids = pages.flat().map((k: any) => k.id as number);
      const sorted = [...ids].sort((a, b) => (order === 'ascending' ? a - b : b - a));
      assert.deepEqual(ids, sorted, `${path} in ${order} id order`);
      assert.equal(new Set(ids).size, 23, `${path}: every key once`);
      await refusesBadPaging(s, path, token, first.body);
    }
  } finally {
    await s.stop();
  }
});

test('servers and widgets (an enterprise tenant has no cap on either): 100 a page by default, ?limit= and ?cursor=, Link to the next page, bad paging 400', async () => {
  const s = await startTestServer();
  try {
    const { tenantId, token } = await tenantSession(s, 'enterprise');
    const n = ARRAY_PAGE_LIMIT.default + 2;
    for (let i = 0; i < n; i++) {
      assert.equal((await s.call('POST', '/v1/servers', { token, body: { name: `s${i}` } })).status, 201);
      assert.equal((await s.call('POST', '/v1/widgets', { token, body: { name: `w${i}` } })).status, 201);
    }
    for (const path of ['/v1/servers', '/v1/widgets', `/v1/admin/tenants/${tenantId}`]) {
      const auth = path.startsWith('/v1/admin') ? ADMIN_TOKEN : token;
      const items = (body: any) => (Array.isArray(body) ? body : body.servers);
      const first = await s.call('GET', path, { token: auth });
      assert.equal(first.status, 200, path);
      assert.equal(items(first.body).length, ARRAY_PAGE_LIMIT.default, path);
      const link = first.headers.get('link') ?? '';
      assert.match(link, /; rel="next"$/, path);
      const rest = await s.call('GET', /^<([^>]+)>/.exec(link)![1]!, { token: auth });
      assert.equal(items(rest.body).length, 2, path);
      assert.equal(rest.headers.get('link'), null, `${path}: the last page names no next one`);
      const names = [...items(first.body), ...items(rest.body)].map((x: any) => x.name);
      assert.deepEqual(
        names,
        Array.from({ length: n }, (_, i) => `${path === '/v1/widgets' ? 'w' : 's'}${i}`),
        `${path}: each once, oldest first`,
      );
      const small = await s.call('GET', `${path}?limit=7`, { token: auth });
      assert.equal(items(small.body).length, 7, path);
      if (Array.isArray(first.body)) {
        assert.deepEqual(
          (await walk(s, `${path}?limit=25`, auth)).map((p) => p.length),
          [25, 25, 25, 25, 2],
          path,
        );
        await refusesBadPaging(s, path, auth, first.body);
      } else {
        assert.equal((await s.call('GET', `${path}?limit=0`, { token: auth })).status, 400, path);
        assert.equal((await s.call('GET', `${path}?cursor=x`, { token: auth })).status, 400, path);
      }
    }
    const other = await tenantSession(s, 'enterprise');
    for (const path of ['/v1/servers?limit=5', '/v1/widgets?limit=5'])
      assert.deepEqual((await s.call('GET', path, { token: other.token })).body, [], 'another tenant sees none');
  } finally {
    await s.stop();
  }
});

test("a widget's keys (revoked ones stay listed) and its webhook endpoints are paged the same way", async () => {
  const s = await startTestServer({ allowPrivateWebhooks: true });
  try {
    const { token } = await tenantSession(s, 'enterprise');
    const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    const id = widget.body.id as string;
    for (let i = 0; i < 22; i++) {
      const key = await s.call('POST', `/v1/widgets/${id}/keys`, { token });
      assert.equal(key.status, 201, JSON.stringify(key.body));
      assert.equal((await s.call('DELETE', `/v1/widgets/${id}/keys/${key.body.id}`, { token })).status, 204);
    }
    for (let i = 0; i < 20; i++) {
      const ep = await s.call('POST', `/v1/widgets/${id}/webhooks`, { token, body: { url: `http://127.0.0.1:9/${i}`, events: ['lead.captured'] } });
      assert.equal(ep.status, 201, JSON.stringify(ep.body));
    }
    for (const [path, total] of [
      [`/v1/widgets/${id}/keys`, 23],
      [`/v1/widgets/${id}/webhooks`, 20],
    ] as const) {
      const first = await s.call('GET', path, { token });
      assert.equal(first.body.length, total, path);
      assert.equal(first.headers.get('link'), null, path);
      const pages = await walk(s, `${path}?limit=8`, token);
      assert.deepEqual(
        pages.map((p) => p.length),
        total === 23 ? [8, 8, 7] : [8, 8, 4],
        path,
      );
      assert.deepEqual(
        pages.flat().map((x: any) => x.id),
        first.body.map((x: any) => x.id),
        `${path}: every item once, in the order of the whole list`,
      );
      await refusesBadPaging(s, path, token, first.body);
    }
  } finally {
    await s.stop();
  }
});
