import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeOpenAI } from '../../../bench/fake-openai.js';
import { widgetServer } from './setup.js';

/**
 * Messages sent while the agent still answers an earlier one: a newer message used to stop the
 * reply in progress, so the earlier message's stream ended `done {handled_by: "human"}` (no
 * person was involved) or a half reply was stored. Each message is now answered, in turn.
 */
test('messages sent at once are each answered by the agent, in the order they came, with whole replies', async () => {
  const fake = await startFakeOpenAI();
  const { s, patch, start, say, visitor } = await widgetServer();
  try {
    await patch({ agent: { base_url: fake.baseUrl, model: 'fake-model', api_key: 'sk-test' } });
    // A reply that takes a while to stream and names the message it answers.
    fake.tokensPerSecond = 40;
    fake.reply = (body) => `You asked: ${body.messages.at(-1).content} and here is a reply.`;
    const c = await start();
    const texts = ['How do I install it?', 'Do you ship abroad?', 'What does it cost?', 'Can I talk to sales?'];
    const answers = await Promise.all(texts.map((t) => say(c, t)));
    for (const [i, a] of answers.entries()) {
      assert.equal(a.status, 200);
      const done = a.frames.at(-1)!;
      assert.equal(done.event, 'done', texts[i]);
      assert.equal(done.data.handled_by, 'agent', `${texts[i]}: ${JSON.stringify(done.data)}`);
      assert.equal(done.data.message.role, 'agent');
      const streamed = a.frames
        .filter((f) => f.event === 'delta')
        .map((f) => f.data.text)
        .join('')
        .trim();
      assert.equal(streamed, done.data.message.text, 'the whole reply was streamed and stored');
      assert.equal(done.data.message.text, `You asked: ${texts[i]} and here is a reply.`, 'each message gets its own answer');
    }
    const transcript = await visitor('GET', `/v1/conversations/${c.conversation_id}/messages`, { token: c.token });
    const messages = transcript.body.messages as { seq: number; role: string; text: string }[];
    assert.equal(messages.filter((m) => m.role === 'visitor').length, texts.length);
    assert.deepEqual(
      messages.filter((m) => m.role === 'agent').map((m) => m.seq),
      answers.map((a) => a.frames.at(-1)!.data.message.seq).sort((x, y) => x - y),
      'one stored reply per message, none cut short',
    );
    // A reply follows the message it answers: the replies come in the order of the messages.
    const order = answers.map((a) => [a.frames[0]!.data.seq as number, a.frames.at(-1)!.data.message.seq as number]).sort((x, y) => x[0]! - y[0]!);
    for (let i = 1; i < order.length; i++) assert.ok(order[i]![1]! > order[i - 1]![1]!, JSON.stringify(order));
  } finally {
    await s.stop();
    await fake.close();
  }
});

test('a message waiting its turn when the conversation ends gets no agent reply, and the model is not asked', async () => {
  const fake = await startFakeOpenAI();
  const { s, patch, start, say, visitor } = await widgetServer();
  try {
    await patch({ agent: { base_url: fake.baseUrl, model: 'fake-model', api_key: 'sk-test' } });
    fake.tokensPerSecond = 20;
    fake.reply = () => 'one two three four five six seven eight';
    const c = await start();
    const first = say(c, 'first');
    while (fake.hits('chat') === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = say(c, 'second');
    // The second message is stored (and waits) before the conversation ends.
    for (;;) {
      const t = await visitor('GET', `/v1/conversations/${c.conversation_id}/messages`, { token: c.token });
      if (t.body.messages.some((m: { text: string }) => m.text === 'second')) break;
    }
    assert.equal((await visitor('POST', `/v1/conversations/${c.conversation_id}/end`, { token: c.token })).status, 200);
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.status, 200);
    assert.deepEqual(b.frames.at(-1)!.data, { handled_by: 'human', message: null });
    assert.equal(fake.hits('chat'), 1, 'the model was asked about the first message only');
  } finally {
    await s.stop();
    await fake.close();
  }
});
