import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { clientsDir, driversDir, jsonOf, missingTool, repliesFixture, run, REPLIES_FIXTURE, startTokenSidecar, ticksFixture, TICKS_FIXTURE, TOKEN } from './helpers.js';
import { clientSuite } from './suite.js';

const skip = missingTool('lua5.4', '-v', 'lua5.4 lua-socket lua-cjson') ?? (await luaLibsMissing());
if (skip) console.log(`# Lua client tests skipped: ${skip}`);
const CLIENT = join(clientsDir, 'lua');
const driver = (...args: string[]) => run('lua5.4', [join(driversDir, 'lua_driver.lua'), CLIENT, ...args]);

/** The driver needs LuaSocket (the tests' HTTP function) and lua-cjson (to read fixtures). */
async function luaLibsMissing(): Promise<string | null> {
  const r = await run('lua5.4', ['-e', 'require("socket.http") require("cjson")']);
  return r.status === 0 ? null : 'LuaSocket or lua-cjson is missing (apt-get install lua-socket lua-cjson; CI installs them via .ci/run)';
}

/** lua-cjson writes an empty Lua table as `{}`: read that back as the empty list it stands for. */
function list(v: unknown): unknown {
  return !Array.isArray(v) && typeof v === 'object' && v !== null && Object.keys(v).length === 0 ? [] : v;
}

clientSuite({
  name: 'lua client',
  skip,
  driver,
  signs: false,
  splitsLongLists: false,
  checkLive(out) {
    assert.equal(out.result, 'sent');
    assert.deepEqual(list(out.failures), []);
    assert.equal(out.last_agent, (ticksFixture().ticks[0]!.snapshot as { agent: number }).agent);
  },
});

test('lua client: parses the fixture reply with a runtime decoder injected too', { skip: skip ?? false }, async () => {
  assert.deepEqual(jsonOf(await driver('parse', REPLIES_FIXTURE, 'cjson')), repliesFixture().expected);
});

test('lua client: late replies are dropped, the last intents kept, a silent sidecar not flooded', { skip: skip ?? false }, async () => {
  const out = jsonOf(await driver('schedule', TICKS_FIXTURE));
  assert.deepEqual(out.trace, ['sent', 'waiting', 'sent', 'sent', 'sent', 'sent', 'sent', 'sent', 'busy', 'sent']);
  // The reply to the first batch came after the second was sent: dropped, "crouched" stays;
  // a 503 and three calls with no answer at all keep it too.
  assert.deepEqual(out.postures, ['crouched', 'crouched', 'crouched']);
  assert.deepEqual(out.errors, ['internal', 'timeout', 'timeout', 'timeout']);
  assert.deepEqual(out.stats, { sent: 8, applied: 1, stale: 1, failed: 4, waiting: 1, busy: 1 });
  assert.equal(out.gathered, 8, 'perception is gathered only for batches that go out');
  assert.equal(out.url, 'http://sidecar.invalid/ticks?token=a%20b%26c');
});

test('lua client: a misspelt or missing option is refused at construction, naming the fix', { skip: skip ?? false }, async () => {
  const out = jsonOf(await driver('options'));
  assert.match(out.typo, /unknown option 'tokenForm' \(did you mean 'token_form'\?\)/);
  assert.match(out.form, /token_form must be bearer, header or query/);
  assert.match(out.nohttp, /opts\.http \(an HTTP function\) is required/);
  assert.equal(out.fine, 'ok');
});

test('lua client: the README example runs against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('lua5.4', [join(CLIENT, 'example.lua'), sidecar.url, TOKEN, '2']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines.slice(0, 4).map((l) => l.replace(/: .*/, '')), ['agent 1', 'agent 2', 'agent 1', 'agent 2']);
    for (const line of lines.slice(0, 4)) assert.match(line, /: (standing|crouched|prone) \[/);
    assert.equal(lines[4], 'sent 2, applied 2, stale 0, failed 0');
  } finally {
    await sidecar.close();
  }
});
