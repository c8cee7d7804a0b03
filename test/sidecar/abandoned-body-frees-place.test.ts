import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { DefaultsSource } from '../../src/sidecar/config/defaults-source.js';
import { abandonBody, finishedRequests } from '../helpers/raw-http.js';
import { startTest } from './helpers.js';

/**
 * The sidecar's own raw routes (/tick, /ticks, the single-flag OFREP evaluation) and its
 * generic ones (bulk OFREP) free a request's place in the connection caps when its client goes
 * away mid-body: ten abandoned uploads against a cap of two per address, then the route answers
 * as usual. Before the fix the third request on was refused 429 for good.
 */
const ROUTES: { path: string; workers: number; status: number }[] = [
  { path: '/tick', workers: 0, status: 400 },
  { path: '/tick', workers: 1, status: 400 },
  { path: '/ticks', workers: 0, status: 400 },
  { path: '/ofrep/v1/evaluate/flags/motd', workers: 0, status: 200 },
  { path: '/ofrep/v1/evaluate/flags', workers: 0, status: 200 },
];

for (const route of ROUTES) {
  test(`${route.path} (${route.workers} workers): an abandoned body frees its place in the connection caps`, async () => {
    const finished = finishedRequests();
    const sc = await startTest({
      workers: route.workers,
      token: 'tok',
      source: new DefaultsSource({ ...DEFAULT_BUNDLE, flags: { motd: { type: 'string', value: 'hi' } } }),
      connections: { perAddress: 2, total: 3 },
      accessLog: finished.observe,
    });
    try {
      for (let i = 1; i <= 10; i++) await abandonBody(sc.port, route.path, 'authorization: Bearer tok\r\n');
      // Each went away after its headers: none refused (429) for the places the others hold.
      assert.deepEqual(await finished.reach(10), Array(10).fill(499));
      const res = await fetch(sc.url + route.path, {
        method: 'POST',
        headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, route.status, await res.text());
    } finally {
      await sc.close();
    }
  });
}
