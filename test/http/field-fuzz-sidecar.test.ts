import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fullTick, startTest } from '../sidecar/helpers.js';
import { faultLogger, fuzzFields, type BodyRoute } from './field-fuzz-harness.js';

const SEED = Number(process.env.FIELD_FUZZ_SEED ?? 11);
const PER_ROUTE = Number(process.env.FIELD_FUZZ_PER_ROUTE ?? 60);

test(`every field of a tick, a batch and a flag evaluation answers hostile values in the error shape, and a refused tick holds no agent (seed ${SEED})`, async () => {
  const faults: string[] = [];
  const sidecar = await startTest({ token: 'secret', logger: faultLogger(faults) });
  try {
    const auth = () => ({ authorization: 'Bearer secret' });
    const port = Number(new URL(sidecar.url).port);
    // The agents held and the ticks answered: a refused tick adds to neither.
    const state = async () => {
      const status = (await (await fetch(`${sidecar.url}/status`, { headers: auth() })).json()) as { agents: number; ticks: { ok: number } };
      return new Map([['agents', String(status.agents)]]);
    };
    const routes: BodyRoute[] = [
      { method: 'POST', path: '/tick', headers: auth, body: fullTick(17) },
      { method: 'POST', path: '/ticks', headers: auth, body: [fullTick(18), fullTick(19)] },
      {
        method: 'POST',
        path: '/ofrep/v1/evaluate/flags/zombie_density',
        headers: auth,
        body: { context: { targetingKey: 'p1', map: 'chernarus', players: 42, server: '7' } },
      },
      { method: 'POST', path: '/ofrep/v1/evaluate/flags', headers: auth, body: { context: { targetingKey: 'p1', map: 'chernarus', players: 42 } } },
    ];
    const problems = await fuzzFields({ port, state }, routes, faults, { seed: SEED, perRoute: PER_ROUTE });
    assert.deepEqual(problems, []);
    assert.equal(await (await fetch(`${sidecar.url}/health`)).text(), 'ok');
  } finally {
    await sidecar.close();
  }
});
