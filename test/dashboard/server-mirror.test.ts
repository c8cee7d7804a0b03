import test from 'node:test';
import assert from 'node:assert/strict';
import * as page from '../../dashboard/server-mirror.js';
import { TOKEN_SCOPES } from '../../src/http/scope.js';
import { FORMAT_NAMES, ROOMS } from '../../src/video/types.js';
import { validateEvent } from '../../src/webhooks/events.js';
import { RATE_LIMIT_MAX } from '../../src/webhooks/schedule.js';
import { SECRET_MAX, URL_MAX } from '../../src/webhooks/route-context.js';
import { EVENT_TYPES, SIGNATURE_SCHEMES } from '../../src/webhooks/types.js';
import { KNOWLEDGE_MAX_BYTES } from '../../src/webhooks/conversations/types.js';

// The page runs in the browser and cannot import the server's modules, so it keeps its own copy
// of the names and limits it offers (dashboard/server-mirror.ts); this keeps the copy equal to
// the one definition.

test("the dashboard offers the server's webhook event types, and test-event data the server accepts for each", () => {
  assert.deepEqual(page.EVENTS, EVENT_TYPES);
  assert.deepEqual(Object.keys(page.TEST_EVENT_DATA), [...EVENT_TYPES]);
  for (const event of EVENT_TYPES) {
    const verdict = validateEvent(event, page.TEST_EVENT_DATA[event]('ses_test1'));
    assert.deepEqual(verdict.ok ? [] : verdict.details, [], event);
  }
});

test("the dashboard's endpoint form has the server's limits and signature schemes", () => {
  assert.equal(page.URL_MAX, URL_MAX);
  assert.equal(page.SECRET_MAX, SECRET_MAX);
  assert.equal(page.RATE_LIMIT_MAX, RATE_LIMIT_MAX);
  assert.deepEqual(
    page.SIGNATURE_SCHEMES.map(([id]) => id),
    SIGNATURE_SCHEMES,
  );
  assert.equal(page.KNOWLEDGE_MAX_BYTES, KNOWLEDGE_MAX_BYTES);
});

test("the dashboard offers the server's video formats, photo rooms and token scopes", () => {
  assert.deepEqual(page.FORMATS, FORMAT_NAMES);
  assert.deepEqual(page.ROOMS, ROOMS);
  assert.deepEqual(
    page.SCOPES.map((s) => s.id),
    TOKEN_SCOPES,
  );
});
