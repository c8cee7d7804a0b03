import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PluginSupervisor, PluginRequestError } from '../../src/dialogue/supervisor.js';
import { scripted, scriptedPlugin, until } from './helpers.js';

function supervisor(options: Partial<ConstructorParameters<typeof PluginSupervisor>[0]> = {}): PluginSupervisor {
  return new PluginSupervisor({ name: 'scripted', script: scriptedPlugin, backoffMs: 50, ...options });
}

async function rejection(p: Promise<unknown>): Promise<PluginRequestError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PluginRequestError, `expected a PluginRequestError, got ${String(err)}`);
    return err;
  }
  throw new Error('expected a rejection');
}

test('starts the plugin on demand and answers requests by id', async () => {
  const s = supervisor();
  try {
    assert.equal(s.pid, null);
    const [a, b] = await Promise.all([s.request('line', scripted('echo', 'one')), s.request('line', scripted('echo', 'two'))]);
    assert.equal(a.text, 'one');
    assert.equal(b.text, 'two');
    assert.equal(typeof s.pid, 'number');
    const health = await s.request('health', {});
    assert.equal(health.ok, true);
  } finally {
    await s.close();
  }
});

test('a plugin error comes back with its code and retry hint', async () => {
  const s = supervisor();
  try {
    const err = await rejection(s.request('line', scripted('fail')));
    assert.equal(err.code, 'unavailable');
    assert.equal(err.retryAfterMs, 1234);
    const unknown = await rejection(s.request('transcribe', { path: '/nope', mime: 'audio/wav' }));
    assert.equal(unknown.code, 'unknown_method');
  } finally {
    await s.close();
  }
});

test('a crashed plugin fails its in-flight request and is restarted after back-off', async () => {
  const s = supervisor();
  try {
    const first = s.pid;
    assert.equal(first, null);
    assert.equal((await s.request('line', scripted('echo', 'up'))).text, 'up');
    const pid = s.pid;
    const err = await rejection(s.request('line', scripted('crash')));
    assert.equal(err.code, 'crashed');
    assert.equal(s.status.state, 'backoff');
    const during = await rejection(s.request('line', scripted('echo', 'x')));
    assert.equal(during.code, 'unavailable');
    await until(() => s.status.state === 'ready');
    assert.notEqual(s.pid, pid);
    assert.equal((await s.request('line', scripted('echo', 'again'))).text, 'again');
    assert.equal(s.status.restarts, 1);
  } finally {
    await s.close();
  }
});

test('restart back-off doubles with each crash in a row', async () => {
  let now = 0;
  const s = supervisor({ now: () => now });
  try {
    await s.request('line', scripted('crash')).catch(() => {});
    assert.equal(s.status.backoffUntil, 50);
    await until(() => s.status.state === 'ready');
    await s.request('line', scripted('crash')).catch(() => {});
    assert.equal(s.status.backoffUntil, 100);
    await until(() => s.status.state === 'ready');
    now = 60_000;
    await s.request('line', scripted('crash')).catch(() => {});
    assert.equal(s.status.backoffUntil, 60_050, 'a child that stayed up 30 s starts the back-off over');
  } finally {
    await s.close();
  }
});

test('SIGKILL of the child mid-request rejects it and the plugin comes back', async () => {
  const s = supervisor();
  try {
    await s.request('health', {});
    const hanging = s.request('line', scripted('hang'));
    process.kill(s.pid!, 'SIGKILL');
    assert.equal((await rejection(hanging)).code, 'crashed');
    await until(() => s.status.state === 'ready');
    assert.equal((await s.request('line', scripted('echo', 'back'))).text, 'back');
  } finally {
    await s.close();
  }
});

test('a hung request times out, and a child that stays hung is killed and restarted', async () => {
  const s = supervisor({ requestTimeoutMs: 100, hungKillMs: 100 });
  try {
    await s.request('health', {});
    const pid = s.pid;
    const err = await rejection(s.request('line', scripted('hang')));
    assert.equal(err.code, 'timeout');
    await until(() => s.status.restarts === 1 && s.status.state === 'ready');
    assert.notEqual(s.pid, pid);
    assert.equal((await s.request('line', scripted('echo', 'ok'))).text, 'ok');
  } finally {
    await s.close();
  }
});

test('the queue is bounded: beyond it a request fails at once with queue_full', async () => {
  const s = supervisor({ concurrency: 1, maxQueue: 2, requestTimeoutMs: 5000 });
  try {
    await s.request('health', {});
    const hung = s.request('line', scripted('hang')).catch((e: unknown) => e);
    const q1 = s.request('line', scripted('echo', 'q1')).catch((e: unknown) => e);
    const q2 = s.request('line', scripted('echo', 'q2')).catch((e: unknown) => e);
    const err = await rejection(s.request('line', scripted('echo', 'q3')));
    assert.equal(err.code, 'queue_full');
    await s.close();
    for (const p of [hung, q1, q2]) assert.equal(((await p) as PluginRequestError).code, 'closed');
  } finally {
    await s.close();
  }
});

test('a missing script fails to start with a reason, then backs off', async () => {
  const s = supervisor({ script: '/nonexistent/plugin.js', backoffMs: 10_000 });
  try {
    const err = await rejection(s.request('health', {}));
    assert.equal(err.code, 'unavailable');
    assert.match(err.message, /failed to start.*Cannot find module/);
    assert.equal(s.status.state, 'backoff');
    assert.equal((await rejection(s.request('health', {}))).code, 'unavailable');
  } finally {
    await s.close();
  }
});
