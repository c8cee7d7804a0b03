import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_LIVE_PERSONAL_TOKENS } from '../../src/identity/routes.js';
import type { DatabaseLocation } from '../../src/store/database.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';

/** Requests sent at once for the last places of each quota. */
const AT_ONCE = 10;

const all = <T>(n: number, f: (i: number) => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

// The issue: on PostgreSQL the quotas were counted in one statement and the row inserted in
// another, so requests sent at once all saw room for the last place: a trial tenant (one
// server, one widget) got 5 servers and 10 widgets from 10 requests, and a user 40 personal
// access tokens past the cap of 20.
for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: requests sent at once never pass a quota: servers and widgets of the plan, live personal access tokens, server and widget keys`, async () => {
    const database: DatabaseLocation | undefined = backend === 'postgres' ? { kind: 'postgres', url: await freshDatabase() } : undefined;
    const s = await startTestServer({ ...(database ? { database } : {}), limits: { liveServerKeys: 3, liveWidgetKeys: 3 } });
    try {
      const trial = await tenantSession(s, 'trial');
      for (const [path, what] of [
        ['/v1/servers', 'server'],
        ['/v1/widgets', 'widget'],
      ] as const) {
        const answers = await all(AT_ONCE, (i) => s.call('POST', path, { token: trial.token, body: { name: `${what} ${i}` } }));
        assert.equal(answers.filter((r) => r.status === 201).length, 1, `one ${what} on the trial plan`);
        for (const r of answers.filter((a) => a.status !== 201)) {
          assert.equal(r.status, 403);
          assert.equal(r.body.error.code, 'plan_limit');
          assert.match(r.body.error.message, new RegExp(`The trial plan allows at most 1 ${what}`));
        }
        assert.equal((await s.call('GET', path, { token: trial.token })).body.length, 1);
      }

      const user = await tenantSession(s, 'agency');
      const tokens = await all(MAX_LIVE_PERSONAL_TOKENS + AT_ONCE, (i) =>
        s.call('POST', '/v1/tokens', { token: user.token, body: { name: `t${i}`, scopes: ['full'] } }),
      );
      assert.equal(tokens.filter((r) => r.status === 201).length, MAX_LIVE_PERSONAL_TOKENS);
      assert.ok(tokens.filter((r) => r.status !== 201).every((r) => r.status === 403 && r.body.error.code === 'plan_limit'));
      const listed = (await s.call('GET', '/v1/tokens', { token: user.token })).body as { id: number }[];
      assert.equal(listed.length, MAX_LIVE_PERSONAL_TOKENS);
      // A revoked one frees its place.
      assert.equal((await s.call('DELETE', `/v1/tokens/${listed[0]!.id}`, { token: user.token })).status, 204);
      const again = await all(AT_ONCE, (i) => s.call('POST', '/v1/tokens', { token: user.token, body: { name: `again ${i}`, scopes: ['full'] } }));
      assert.equal(again.filter((r) => r.status === 201).length, 1);

      const server = (await s.call('POST', '/v1/servers', { token: user.token, body: { name: 'keyed' } })).body.id as number;
      const widget = (await s.call('POST', '/v1/widgets', { token: user.token, body: { name: 'keyed' } })).body.id as string;
      for (const [path, made] of [
        [`/v1/servers/${server}/keys`, 3],
        // The widget's first key was made with it.
        [`/v1/widgets/${widget}/keys`, 2],
      ] as const) {
        const keys = await all(AT_ONCE, () => s.call('POST', path, { token: user.token }));
        assert.equal(keys.filter((r) => r.status === 201).length, made, path);
        assert.ok(keys.filter((r) => r.status !== 201).every((r) => r.status === 403 && r.body.error.code === 'plan_limit'));
      }
    } finally {
      await s.stop();
    }
  });
}
