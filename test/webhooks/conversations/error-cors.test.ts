/**
 * Every visitor answer carries the CORS headers for an allowed origin, errors included, so the
 * page can read them. The refusals that come before the origin check (a suspended tenant's 503,
 * the per-address 429, a wrong conversation token's 401, answered before the body is read)
 * carried none: a widget on a customer's site saw only a network error, never "This chat is
 * unavailable" or a Retry-After. A page of an origin the widget does not list still gets none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PAGE, widgetServer } from './setup.js';
import { VISITOR_BODY_MAX_BYTES } from '../../../src/webhooks/conversations/route-context.js';

const OTHER = 'https://evil.example';

test("a suspended tenant's 503 (and its preflight's 204), a wrong token's 401 and the address limit's 429 carry the CORS headers of an allowed origin, and none for another", async () => {
  const { s, widgetId, visitor, start, suspend } = await widgetServer({ limits: { widgetAddress: { limit: 16, windowMs: 60_000 } } });
  try {
    const c = await start();
    const wrong = await visitor('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: 'bvt_wrong', body: { text: 'hi' } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('access-control-allow-origin'), PAGE);
    const wrongGet = await visitor('GET', `/v1/conversations/${c.conversation_id}/messages?after=0`, { token: 'bvt_wrong' });
    assert.equal(wrongGet.status, 401);
    assert.equal(wrongGet.headers.get('access-control-allow-origin'), PAGE);
    const wrongOther = await visitor('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: 'bvt_wrong', body: { text: 'hi' }, origin: OTHER });
    assert.equal(wrongOther.status, 401);
    assert.equal(wrongOther.headers.get('access-control-allow-origin'), null);

    assert.equal((await suspend()).status, 200);
    for (const [method, path, opts] of [
      ['GET', `/v1/widgets/${widgetId}/config`, {}],
      ['POST', `/v1/widgets/${widgetId}/conversations`, { body: {} }],
      ['POST', `/v1/conversations/${c.conversation_id}/messages`, { token: c.token, body: { text: 'hi' } }],
    ] as const) {
      const r = await visitor(method, path, opts);
      assert.equal(r.status, 503, `${method} ${path}`);
      assert.equal(r.body.error?.code ?? JSON.parse(r.body).error.code, 'unavailable');
      assert.equal(r.headers.get('access-control-allow-origin'), PAGE, `${method} ${path}`);
      const other = await visitor(method, path, { ...opts, origin: OTHER });
      assert.equal(other.headers.get('access-control-allow-origin'), null, `${method} ${path} from another origin`);
    }

    // Its preflight passes (a refused one would stop the browser from sending the call at all).
    const preflight = await visitor('OPTIONS', `/v1/conversations/${c.conversation_id}/messages`);
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), PAGE);
    const refusedPreflight = await visitor('OPTIONS', `/v1/widgets/${widgetId}/conversations`, { origin: OTHER });
    assert.notEqual(refusedPreflight.status, 204);
    assert.equal(refusedPreflight.headers.get('access-control-allow-origin'), null);

    let limited: Awaited<ReturnType<typeof visitor>> | null = null;
    for (let i = 0; i < 17 && limited === null; i++) {
      const r = await visitor('GET', `/v1/widgets/${widgetId}/config`);
      if (r.status === 429) limited = r;
    }
    assert.ok(limited, 'the address limit was reached');
    assert.equal(limited.headers.get('access-control-allow-origin'), PAGE);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal(limited.headers.get('access-control-expose-headers')?.includes('Retry-After'), true);
  } finally {
    await s.stop();
  }
});

test('a visitor body over 16 KB is a 413 the page can read: declared or streamed, on a widget or a conversation route; none for another origin', async () => {
  const { s, widgetId, start } = await widgetServer();
  try {
    const c = await start();
    const big = JSON.stringify({ text: 'x'.repeat(VISITOR_BODY_MAX_BYTES) });
    const send = async (path: string, origin: string, streamed: boolean, token?: string) => {
      const headers: Record<string, string> = { origin, 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const bytes = new TextEncoder().encode(big);
      // A stream has no length to declare: the server finds it too large only while reading it.
      const body = streamed
        ? new ReadableStream<Uint8Array>({
            start(controller) {
              for (let i = 0; i < bytes.length; i += 4096) controller.enqueue(bytes.slice(i, i + 4096));
              controller.close();
            },
          })
        : big;
      const res = await fetch(s.url + path, { method: 'POST', headers, body, ...(streamed ? { duplex: 'half' } : {}) } as RequestInit);
      return { status: res.status, origin: res.headers.get('access-control-allow-origin'), body: (await res.json()) as { error: { code: string } } };
    };
    for (const streamed of [false, true]) {
      for (const [path, token] of [
        [`/v1/widgets/${widgetId}/conversations`, undefined],
        [`/v1/conversations/${c.conversation_id}/messages`, c.token],
        [`/v1/conversations/${c.conversation_id}/lead`, c.token],
      ] as const) {
        const what = `${path} ${streamed ? 'streamed' : 'declared'}`;
        const r = await send(path, PAGE, streamed, token);
        assert.equal(r.status, 413, what);
        assert.equal(r.body.error.code, 'payload_too_large', what);
        assert.equal(r.origin, PAGE, what);
        const other = await send(path, OTHER, streamed, token);
        assert.equal(other.status, 413, what);
        assert.equal(other.origin, null, `${what} from another origin`);
      }
    }
    // Nothing was stored: the conversation holds no message.
    const transcript = await fetch(`${s.url}/v1/conversations/${c.conversation_id}/messages?after=0`, { headers: { authorization: `Bearer ${c.token}` } });
    assert.deepEqual(((await transcript.json()) as { messages: unknown[] }).messages, []);
  } finally {
    await s.stop();
  }
});
