import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { tenantSession } from '../../helpers/embedded.js';
import { openStream, PAGE, widgetServer } from './setup.js';

/**
 * Live visitor streams (a conversation's event stream, a message's reply stream) hold a
 * connection each for as long as the visitor likes. They are capped per client address, per
 * tenant and in all, so one address, or one tenant's visitors, cannot take every connection
 * the server holds: past a cap the stream is refused before anything is stored, and a stream
 * that closes gives its place back.
 */

type Stream = Awaited<ReturnType<typeof openStream>>;

/** Waits (without a time bound) until the server counts `n` live visitor streams. */
async function until(read: () => number, n: number): Promise<void> {
  while (read() !== n) await sleep(10);
}

test('a client address holds at most widgetStreamsPerAddress visitor streams: the next is 429 with Retry-After and CORS, stores nothing, and a closed stream frees its place', async () => {
  const { s, start, say, visitor } = await widgetServer({ limits: { widgetStreamsPerAddress: 3 } });
  const streams: Stream[] = [];
  try {
    const conversations = [await start(), await start(), await start(), await start()];
    for (const c of conversations.slice(0, 3)) {
      const stream = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
      assert.equal(stream.res.status, 200);
      await stream.next((f) => f.event === 'state');
      streams.push(stream);
    }
    assert.equal(s.conversations.visitorStreams, 3);
    const fourth = conversations[3]!;
    const refused = await visitor('GET', `/v1/conversations/${fourth.conversation_id}/events`, { token: fourth.token });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /at most 3 live chat streams from one address/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('access-control-allow-origin'), PAGE);
    // A message's reply stream counts too, and a refused message is not stored.
    const message = await say(fourth, 'hello');
    assert.equal(message.status, 429);
    const transcript = await visitor('GET', `/v1/conversations/${fourth.conversation_id}/messages?after=0`, { token: fourth.token });
    assert.equal(transcript.status, 200);
    assert.deepEqual(transcript.body.messages, []);

    streams.shift()!.close();
    await until(() => s.conversations.visitorStreams, 2);
    const again = await say(fourth, 'hello');
    assert.equal(again.status, 200);
    assert.equal(again.frames.at(-1)!.event, 'done');
    await until(() => s.conversations.visitorStreams, 2);
  } finally {
    for (const stream of streams) stream.close();
    await s.stop();
  }
});

test("one tenant's visitors hold at most widgetStreamsPerTenant streams: past it 503 for that tenant only, another tenant's widget still streams", async () => {
  const { s, start, visitor } = await widgetServer({ limits: { widgetStreamsPerTenant: 2 } });
  const streams: Stream[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const c = await start();
      const stream = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
      assert.equal(stream.res.status, 200);
      streams.push(stream);
    }
    const c = await start();
    const refused = await visitor('GET', `/v1/conversations/${c.conversation_id}/events`, { token: c.token });
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'unavailable');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('access-control-allow-origin'), PAGE);

    const other = await tenantSession(s);
    const w = await s.call('POST', '/v1/widgets', { token: other.token, body: { name: 'Other' } });
    await s.call('PATCH', `/v1/widgets/${w.body.id}`, { token: other.token, body: { allowed_origins: [PAGE] } });
    const opened = await visitor('POST', `/v1/widgets/${w.body.id}/conversations`, { body: {} });
    assert.equal(opened.status, 201);
    const theirs = await openStream(`${s.url}/v1/conversations/${opened.body.conversation_id}/events`, opened.body.token);
    streams.push(theirs);
    assert.equal(theirs.res.status, 200);
    await theirs.next((f) => f.event === 'state');
  } finally {
    for (const stream of streams) stream.close();
    await s.stop();
  }
});

test('visitor streams in all are at most widgetStreamsTotal, and never more than half the connections the server holds', async () => {
  for (const options of [{ limits: { widgetStreamsTotal: 2 } }, { connections: { perAddress: 4, total: 4 } }]) {
    const { s, start, visitor } = await widgetServer(options);
    const streams: Stream[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const c = await start();
        const stream = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
        assert.equal(stream.res.status, 200, JSON.stringify(options));
        streams.push(stream);
      }
      const c = await start();
      const refused = await visitor('GET', `/v1/conversations/${c.conversation_id}/events`, { token: c.token });
      assert.equal(refused.status, 503, JSON.stringify(options));
      assert.equal(refused.body.error.code, 'unavailable');
      assert.match(refused.body.error.message, /at most 2 live chat streams/);
      // Other requests still have room.
      assert.equal((await visitor('GET', `/v1/conversations/${c.conversation_id}/messages?after=0`, { token: c.token })).status, 200);
    } finally {
      for (const stream of streams) stream.close();
      await s.stop();
    }
  }
});

test('an event stream whose replay fails gives its place back', async () => {
  const { s, start, visitor } = await widgetServer({ limits: { widgetStreamsPerAddress: 1 } });
  try {
    const c = await start();
    // A bad ?after= is refused before any stream is made; the place is not kept.
    for (let i = 0; i < 3; i++) assert.equal((await visitor('GET', `/v1/conversations/${c.conversation_id}/events?after=01`, { token: c.token })).status, 400);
    assert.equal(s.conversations.visitorStreams, 0);
    const stream = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
    assert.equal(stream.res.status, 200);
    stream.close();
  } finally {
    await s.stop();
  }
});
