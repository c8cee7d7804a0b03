import test from 'node:test';
import assert from 'node:assert/strict';
import { startLinkedSidecar } from '../../src/sidecar/link/control-plane-link.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';
import { BURST_LIMITS, report, serverWithKey, signed } from './helpers.js';

// A bundle can have LLM dialogue on while the sidecar has no model: nothing said so (issue #29,
// "LLM dialogue is ticked with no model configured"). The sidecar now reports where its lines
// come from, and the server summary the dashboard reads carries it.

test('a report says where the lines come from; the summary keeps the last one said; a bad one is 422 naming the field', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const sc = await serverWithKey(s, token);
    const summary = async () => (await s.call('GET', `/v1/servers/${sc.serverId}`, { token })).body.connection;
    let n = 0;
    const send = (extra: Record<string, unknown>) =>
      signed(s, sc.key, 'POST', '/v1/telemetry', { body: report(sc.serverId, { reportId: `d${n++}`, ...extra }) });

    assert.equal((await send({})).status, 202);
    assert.equal((await summary()).dialogue, null);
    assert.equal((await send({ dialogue: { source: 'model', model: 'gpt-4o-mini' } })).status, 202);
    assert.deepEqual((await summary()).dialogue, { source: 'model', model: 'gpt-4o-mini' });
    // A report that does not say (an older sidecar) leaves the last one said.
    assert.equal((await send({})).status, 202);
    assert.deepEqual((await summary()).dialogue, { source: 'model', model: 'gpt-4o-mini' });
    assert.equal((await send({ dialogue: { source: 'none' } })).status, 202);
    assert.deepEqual((await summary()).dialogue, { source: 'none' });

    for (const [dialogue, path] of [
      [{ source: 'llm' }, 'dialogue.source'],
      [{ source: 'model', model: 'x'.repeat(201) }, 'dialogue.model'],
      [{ source: 'demo', extra: true }, 'dialogue.extra'],
      ['model', 'dialogue'],
    ] as const) {
      const res = await send({ dialogue });
      assert.equal(res.status, 422, JSON.stringify(dialogue));
      assert.ok(
        res.body.error.details.some((d: { path: string }) => d.path === path),
        `${JSON.stringify(dialogue)}: ${JSON.stringify(res.body.error.details)}`,
      );
    }
    assert.deepEqual((await summary()).dialogue, { source: 'none' });
  } finally {
    await s.stop();
  }
});

test('a sidecar reports its lines: none without a model, demo with the demo lines', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  const state = tempDir();
  const linked: { close(): Promise<void> }[] = [];
  try {
    const { token } = await tenantSession(s);
    for (const [name, dialogue, expected] of [
      ['silent', null, { source: 'none' }],
      ['demo', { scripted: true }, { source: 'demo' }],
    ] as const) {
      const sc = await serverWithKey(s, token, name);
      const l = await startLinkedSidecar(
        { url: s.url, serverId: String(sc.serverId), serverKey: sc.key, stateDir: `${state.path}/${name}`, telemetryMs: 3_600_000 },
        { host: '127.0.0.1', port: 0, workers: 0, ...(dialogue ? { dialogue } : {}) },
      );
      linked.push(l.sidecar);
      // A sidecar sends its first report as it starts.
      let c = (await s.call('GET', `/v1/servers/${sc.serverId}`, { token })).body.connection;
      while (c.dialogue === null) {
        await new Promise((r) => setTimeout(r, 20));
        c = (await s.call('GET', `/v1/servers/${sc.serverId}`, { token })).body.connection;
      }
      assert.deepEqual(c.dialogue, expected, name);
    }
  } finally {
    for (const l of linked) await l.close();
    await s.stop();
    state.dispose();
  }
});
