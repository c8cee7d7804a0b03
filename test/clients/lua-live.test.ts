import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run, startTokenSidecar, ticksFixture, TOKEN } from './helpers.js';
import { CLIENT, liveClient, list, skipLive as skip } from './lua-client.js';
import { clientLiveSuite } from './suite.js';

if (skip) console.log(`# Lua client tests skipped: ${skip}`);
clientLiveSuite({
  ...liveClient,
  checkLive(out) {
    assert.equal(out.result, 'sent');
    assert.deepEqual(list(out.failures), []);
    assert.equal(out.last_agent, (ticksFixture().ticks[0]!.snapshot as { agent: number }).agent);
  },
});

test('lua client: the README example runs against a real sidecar', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const r = await run('lua5.4', [join(CLIENT, 'example.lua'), sidecar.url, TOKEN, '2']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(
      lines.slice(0, 4).map((l) => l.replace(/: .*/, '')),
      ['agent 1', 'agent 2', 'agent 1', 'agent 2'],
    );
    for (const line of lines.slice(0, 4)) assert.match(line, /: (standing|crouched|prone) \[/);
    assert.equal(lines[4], 'sent 2, applied 2, stale 0, failed 0');
  } finally {
    await sidecar.close();
  }
});
