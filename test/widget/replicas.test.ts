import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startEmbedded, type Embedded } from '../../src/embedded/start.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call } from '../helpers/replicas.js';
import { openStream } from '../webhooks/conversations/setup.js';

const ADMIN = 'bsa_widget_replicas_admin';

test(
  'two replicas on PostgreSQL: a widget streaming from one gets the reply an operator sends through the other, once, and the end',
  { timeout: 120_000 },
  async () => {
    const url = await freshDatabase();
    const dir = tempDir();
    const common = { port: 0, database: { kind: 'postgres', url } as const, adminToken: ADMIN, dataDir: join(dir.path, 'data') };
    const started: Embedded[] = [];
    try {
      const a = await startEmbedded(common);
      started.push(a);
      const b = await startEmbedded(common);
      started.push(b);
      const tenant = await call(a.url, 'POST', '/v1/admin/tenants', ADMIN, { name: 'rep', plan: 'pro' });
      await call(a.url, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'o@rep.test', password: 'long enough' });
      const { token } = await call(a.url, 'POST', '/v1/auth/login', null, { email: 'o@rep.test', password: 'long enough' });
      const widget = await call(a.url, 'POST', '/v1/widgets', token, { name: 'rep' });
      await call(a.url, 'PATCH', `/v1/widgets/${widget.id}`, token, { allowed_origins: ['https://shop.example'] });
      const c = await call(a.url, 'POST', `/v1/widgets/${widget.id}/conversations`, null, {});
      const events = await openStream(`${a.url}/v1/conversations/${c.conversation_id}/events`, c.token);
      await events.next((f) => f.event === 'state');

      const reply = await call(b.url, 'POST', `/v1/widgets/${widget.id}/conversations/${c.conversation_id}/reply`, token, { text: 'From the other replica.' });
      const got = await events.next((f) => f.event === 'message' && f.data.role === 'operator');
      assert.equal(got.data.text, 'From the other replica.');
      assert.equal(got.id, String(reply.seq));
      // A reply too long for one notification: the widget is told to fetch the transcript.
      const long = '😀'.repeat(2000);
      await call(b.url, 'POST', `/v1/widgets/${widget.id}/conversations/${c.conversation_id}/reply`, token, { text: long });
      await events.next((f) => f.event === 'resync');
      await call(b.url, 'POST', `/v1/widgets/${widget.id}/conversations/${c.conversation_id}/close`, token);
      assert.deepEqual((await events.next((f) => f.event === 'ended')).data, { reason: 'agent_closed' });
      await events.done;
      assert.equal(events.frames.filter((f) => f.event === 'message').length, 1, 'delivered once');
      const transcript = await fetch(`${a.url}/v1/conversations/${c.conversation_id}/messages`, { headers: { authorization: `Bearer ${c.token}` } }).then(
        (r) => r.json() as Promise<{ messages: { text: string }[] }>,
      );
      assert.deepEqual(
        transcript.messages.map((m) => m.text),
        ['From the other replica.', long],
      );
    } finally {
      for (const s of started.reverse()) await s.close();
      dir.dispose();
    }
  },
);
