/**
 * Regression: on PostgreSQL a configuration version is an INTEGER column (up to 2^31 − 1), while
 * the API takes a version (a rollback's `{version}`, `…/config/versions/{version}`) and a
 * position (a page's cursor, a transcript's `?after=`) up to 15 digits: comparing the column with
 * a larger value was an "out of range for type integer" error, a 500. Such a value names nothing
 * (404) or starts past everything (an empty page), on both backends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ARRAY_PAGE_LIMIT, ListPage, type ListScope } from '../../src/http/pagination.js';
import type { Request } from '../../src/http/server.js';
import { startTestServer, tenantSession, ADMIN_TOKEN } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';
import { PAGE } from '../webhooks/conversations/setup.js';

const HUGE = 999_999_999_999_999;

/** The cursor a list would give at `position`: no list here reaches it, so it is made as the server makes it. */
function cursorAt(position: number, scope: ListScope, params: Record<string, string> = {}): string {
  const req = { params, path: '/', searchParams: () => new URLSearchParams() } as unknown as Request;
  return new ListPage(req, scope, ARRAY_PAGE_LIMIT).cursor(position)!;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: versions, cursors and message positions past 2^31 are 404 or an empty page, never a 500`, { timeout: 120_000 }, async () => {
    const s = await startTestServer(backend === 'postgres' ? { database: { kind: 'postgres', url: await freshDatabase() } } : {});
    try {
      const { token, tenantId } = await tenantSession(s);
      const server = await s.call('POST', '/v1/servers', { token, body: { name: 'alpha' } });
      const id = server.body.id as number;
      for (const version of [2 ** 31, HUGE, Number.MAX_SAFE_INTEGER]) {
        const rollback = await s.call('POST', `/v1/servers/${id}/config/rollback`, { token, body: { version } });
        assert.equal(rollback.status, 404, `rollback to ${version}: ${JSON.stringify(rollback.body)}`);
      }
      assert.equal((await s.call('GET', `/v1/servers/${id}/config/versions/${HUGE}`, { token })).status, 404);
      const older = await s.call(
        'GET',
        `/v1/servers/${id}/config/versions?cursor=${cursorAt(HUGE, { list: 'config-versions', owner: `tenant:${tenantId}` }, { id: String(id) })}`,
        { token },
      );
      assert.equal(older.status, 200, JSON.stringify(older.body));
      assert.deepEqual(
        older.body.map((v: { version: number }) => v.version),
        [1],
      );
      const tenants = await s.call('GET', `/v1/admin/tenants?cursor=${cursorAt(HUGE, { list: 'tenants', owner: 'admin' })}`, { token: ADMIN_TOKEN });
      assert.deepEqual([tenants.status, tenants.body], [200, []]);

      const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
      await s.call('PATCH', `/v1/widgets/${widget.body.id}`, { token, body: { allowed_origins: [PAGE] } });
      const c = await s.call('POST', `/v1/widgets/${widget.body.id}/conversations`, { body: {} });
      assert.equal(c.status, 201);
      const transcript = await s.call('GET', `/v1/conversations/${c.body.conversation_id}/messages?after=${HUGE}`, { token: c.body.token });
      assert.equal(transcript.status, 200, JSON.stringify(transcript.body));
      assert.deepEqual(transcript.body.messages, []);
    } finally {
      await s.stop();
    }
  });
}
