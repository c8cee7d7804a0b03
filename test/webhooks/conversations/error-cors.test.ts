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
