import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSender } from '../../src/net/sender.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';

/**
 * A webhook receiver is the tenant's, and the first 4 KB of its answer are kept in the delivery
 * log. A NUL among them could not be stored on PostgreSQL: recording the attempt failed, so the
 * delivery stayed in flight, was sent again when its lease lapsed and failed to record again,
 * without end (and with it every other result of the same batch). The excerpt is made
 * storable as it is read: NULs dropped, bytes that are not UTF-8 read as U+FFFD.
 */
const ANSWER = Buffer.from([0x6f, 0x6b, 0x00, 0x01, 0xff, 0x41]);

async function receiver(): Promise<{ url: string; hits: () => number; close(): void }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    hits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(ANSWER);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits: () => hits, close: () => server.close() };
}

test("a receiver's answer holding a NUL and a byte that is not UTF-8 is kept without the NUL", async () => {
  const r = await receiver();
  const sender = createSender();
  try {
    const out = await sender.send({ url: new URL(r.url), addresses: [{ address: '127.0.0.1', family: 4 }], headers: {}, body: '{}', timeoutMs: 5000 });
    assert.equal(out.kind, 'response');
    assert.equal(out.kind === 'response' && out.excerpt, 'ok\u0001\ufffdA');
  } finally {
    sender.close();
    r.close();
  }
});

test('on PostgreSQL a delivery whose receiver answers a NUL is recorded as succeeded, once', async () => {
  const r = await receiver();
  const s = await startTestServer({ allowPrivateWebhooks: true, database: { kind: 'postgres', url: await freshDatabase() } });
  try {
    const { token } = await tenantSession(s, 'enterprise');
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } })).body;
    const endpoint = (await s.call('POST', `/v1/widgets/${widget.id}/webhooks`, { token, body: { url: r.url, events: ['conversation.started'] } })).body;
    const sent = await s.call('POST', `/v1/widgets/${widget.id}/events`, {
      token: widget.key,
      body: { event: 'conversation.started', data: { conversation_id: 'ses_abcdefghij' } },
    });
    assert.equal(sent.status, 202);
    const list = `/v1/widgets/${widget.id}/webhooks/${endpoint.id}/deliveries`;
    // Polling the delivery log is the API's contract for a delivery's outcome.
    let delivery: { id: string; status: string } | undefined;
    for (;;) {
      delivery = (await s.call('GET', list, { token })).body.data[0];
      if (delivery?.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const detail = await s.call('GET', `${list}/${delivery.id}`, { token });
    assert.equal(detail.status, 200);
    assert.ok(JSON.stringify(detail.body).includes('ok\\u0001\ufffdA'), JSON.stringify(detail.body));
    assert.equal(r.hits(), 1);
  } finally {
    await s.stop();
    r.close();
  }
});
