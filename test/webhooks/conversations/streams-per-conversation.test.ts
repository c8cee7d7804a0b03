import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STREAMS_PER_CONVERSATION } from '../../../src/webhooks/conversations/service.js';
import { openStream, widgetServer } from './setup.js';

/**
 * A conversation holds at most STREAMS_PER_CONVERSATION live event streams (a visitor's tabs):
 * one more closes the oldest, so a page that reconnects in a loop cannot pile up streams, and
 * the streams left open still hear the conversation.
 */
test(`a conversation keeps at most ${STREAMS_PER_CONVERSATION} event streams: one more closes the oldest, the others stay live`, async () => {
  const { s, start, say } = await widgetServer();
  const streams: Awaited<ReturnType<typeof openStream>>[] = [];
  try {
    const c = await start();
    for (let i = 0; i <= STREAMS_PER_CONVERSATION; i++) {
      const stream = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
      assert.equal(stream.res.status, 200);
      await stream.next((f) => f.event === 'state');
      streams.push(stream);
    }
    await streams[0]!.done;
    assert.equal(streams[0]!.ended, true, 'the oldest stream is closed');
    const reply = await say(c, 'hello');
    assert.equal(reply.status, 200);
    const text = reply.frames.at(-1)!.data.message.text as string;
    for (const stream of streams.slice(1)) {
      const heard = await stream.next((f) => f.event === 'message' && f.data.role === 'agent');
      assert.equal(heard.data.text, text);
      assert.equal(stream.ended, false);
    }
    assert.equal(streams[0]!.frames.filter((f) => f.event === 'message' && f.data.role === 'agent').length, 0, 'the closed stream heard nothing more');
  } finally {
    for (const stream of streams) stream.close();
    await s.stop();
  }
});
