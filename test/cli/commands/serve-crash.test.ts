import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { tempDir } from '../../helpers/paths.js';
import type { TestServer } from '../../helpers/embedded.js';
import { call, startReplica, tenantSession, type Replica } from '../../helpers/replicas.js';
import { report, signed } from '../../controlplane/helpers.js';
import { testImage } from '../../video/helpers.js';

/** Back-to-back reports and publishes: the defaults (2 reports a second, 120 signed requests a minute) would refuse them. */
const BURST = {
  serverKey: { limit: 100_000, windowSeconds: 60 },
  telemetryReports: { limit: 100_000, windowSeconds: 1 },
  session: { limit: 100_000, windowSeconds: 60 },
  apiKey: { limit: 100_000, windowSeconds: 60 },
  tenantApiKeys: { limit: 100_000, windowSeconds: 60 },
};
/** Work answered before the kill, so the kill lands amid a stream of accepted requests. */
const REPORTS_BEFORE_KILL = 40;
const PUBLISHES_BEFORE_KILL = 5;

function serveOn(dir: string): Promise<Replica> {
  return startReplica(`sqlite:${join(dir, 'crash.db')}`, dir, ['--data', join(dir, 'data'), '--render-concurrency', '1'], BURST);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('kill -9 of serve on SQLite amid telemetry, publishes and a checkout: a restart on the same file keeps every 2xx, and counts nothing twice', async () => {
  const dir = tempDir();
  let serve = await serveOn(dir.path);
  const at = (): TestServer => ({ url: serve.url }) as TestServer;
  try {
    const { token, tenantId } = await tenantSession(serve.url, 'trial');
    const server = await call(serve.url, 'POST', '/v1/servers', token, { name: 'crash' });
    const { key } = await call(serve.url, 'POST', `/v1/servers/${server.id}/keys`, token);
    const checkout = await call(serve.url, 'POST', '/v1/billing/checkout', token, { tier: 'large' });
    const completePath = new URL(checkout.url).pathname;

    let killed = false;
    const sent: string[] = [];
    const stored: string[] = [];
    const reports = (async () => {
      for (let i = 0; !killed; i++) {
        const id = `r${i}`;
        sent.push(id);
        const r = await signed(at(), key, 'POST', '/v1/telemetry', { body: report(server.id, { reportId: id, linesSpoken: 1 }) }).catch(() => null);
        if (!r) return;
        assert.equal(r.status, 202, r.text);
        stored.push(id);
      }
    })();
    const published: { version: number; note: string }[] = [];
    const publishes = (async () => {
      let bundle = await call(serve.url, 'GET', `/v1/servers/${server.id}/config`, token);
      for (let i = 0; !killed; i++) {
        const note = `publish ${i}`;
        const r = await fetch(`${serve.url}/v1/servers/${server.id}/config`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-config-note': note },
          body: JSON.stringify(bundle),
        }).catch(() => null);
        if (!r) return;
        const body = (await r.json().catch(() => null)) as { version: number } | null;
        if (body === null) return; // the answer was cut off by the kill
        assert.equal(r.status, 200, JSON.stringify(body));
        published.push({ version: body.version, note });
        bundle = body;
      }
    })();
    // A loop that failed ends early: its assertion is reported below rather than waited for.
    let ended = false;
    const end = () => (ended = true);
    void Promise.race([reports, publishes]).then(end, end);
    while (!ended && (stored.length < REPORTS_BEFORE_KILL || published.length < PUBLISHES_BEFORE_KILL)) await sleep(5);
    assert.equal(ended, false, 'the traffic stopped before the kill');
    // The checkout link is opened in the same instant as the kill: answered or not, the sale must end up granted once.
    const completion = fetch(serve.url + completePath, { method: 'POST' })
      .then((r) => r.status)
      .catch(() => null);
    await serve.kill();
    killed = true;
    await Promise.all([reports, publishes]);
    const completed = await completion;

    serve = await serveOn(dir.path);
    const db = new Database(join(dir.path, 'crash.db'), { readonly: true });
    try {
      const rows = (db.prepare('SELECT report_id FROM cp_reports WHERE server_id = ?').all(server.id) as { report_id: string }[]).map((r) => r.report_id);
      for (const id of stored) assert.ok(rows.includes(id), `report ${id} was answered 202 and is gone`);
      assert.equal(new Set(rows).size, rows.length);
      const usage = db.prepare('SELECT SUM(reports) AS reports, SUM(lines_spoken) AS lines FROM cp_usage_daily WHERE server_id = ?').get(server.id) as {
        reports: number;
        lines: number;
      };
      assert.deepEqual(usage, { reports: rows.length, lines: rows.length }, 'the daily rollup counts each stored report once');
    } finally {
      db.close();
    }
    // The sidecar sends again what was not answered: what the dead process had stored is acknowledged as a duplicate.
    for (const id of sent.filter((id) => !stored.includes(id))) {
      const r = await signed(at(), key, 'POST', '/v1/telemetry', { body: report(server.id, { reportId: id, linesSpoken: 1 }) });
      assert.equal(r.status, 202, r.text);
    }
    const usage = await call(serve.url, 'GET', `/v1/servers/${server.id}/usage`, token);
    assert.equal(usage.linesSpoken, sent.length, `each of the ${sent.length} reports counted once`);

    const versions = await call(serve.url, 'GET', `/v1/servers/${server.id}/config/versions`, token);
    const list: { version: number; note: string }[] = versions;
    for (const p of published) {
      assert.ok(
        list.some((v) => v.version === p.version && v.note === p.note),
        `version ${p.version} was answered 200 and is gone`,
      );
    }
    const numbers = list.map((v) => v.version).sort((a, b) => a - b);
    assert.deepEqual(
      numbers,
      numbers.map((_, i) => i + 1),
      'versions are whole and contiguous',
    );

    if (completed !== 200) {
      // Not answered: opening the link again completes it now.
      assert.equal((await fetch(serve.url + completePath, { method: 'POST' })).status, 200);
    }
    const after = await call(serve.url, 'GET', `/v1/billing/checkout/${checkout.id}`, token);
    assert.equal(after.status, 'complete');
    const tenant = await call(serve.url, 'GET', `/v1/admin/tenants/${tenantId}`, 'bsa_replica_test_admin');
    assert.equal(tenant.plan, 'agency');
  } finally {
    await serve.kill();
    dir.dispose();
  }
});

test('kill -9 of serve on SQLite mid-render: the next start on the same file removes its scratch, renders the video again and completes it once', async () => {
  const dir = tempDir();
  let serve = await serveOn(dir.path);
  try {
    const { token } = await tenantSession(serve.url, 'agency');
    const { key } = await call(serve.url, 'POST', '/v1/api-keys', token, { name: 'k' });
    const property = await call(serve.url, 'POST', '/v1/properties', key, { title: 'Crash', address: '1 Kill Street', price: 1, currency: 'USD' });
    const photos = [0, 1, 2].map((i) => ({ data_base64: testImage(i % 2 ? 'png' : 'jpg', '640x360').toString('base64') }));
    await call(serve.url, 'POST', `/v1/properties/${property.id}/photos`, key, { photos });
    const video = await call(serve.url, 'POST', '/v1/videos', key, { property_id: property.id, template: 'tour', format: '16:9' });
    assert.equal(video.status, 'queued');
    const work = join(dir.path, 'data', 'work');
    // Killed once its scratch exists: a render is claimed (status rendering) a moment before it makes it.
    for (;;) {
      const { status } = await call(serve.url, 'GET', `/v1/videos/${video.id}`, key);
      if (status === 'rendering' && readdirSync(work).length > 0) break;
      assert.ok(status === 'queued' || status === 'rendering', `the render ended before it could be killed: ${status}`);
      await sleep(20);
    }
    await serve.kill();
    assert.notDeepEqual(readdirSync(work), [], 'the killed render left its scratch directory');

    serve = await serveOn(dir.path);
    let v: { status: string; error?: string; video_asset_id?: number };
    do {
      await sleep(200);
      v = await call(serve.url, 'GET', `/v1/videos/${video.id}`, key);
    } while (v.status === 'queued' || v.status === 'rendering');
    assert.equal(v.status, 'completed', v.error);
    const db = new Database(join(dir.path, 'crash.db'), { readonly: true });
    try {
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM video_assets WHERE video_id = ?').get(video.id) as { n: number }).n, 2, 'one video and one poster');
    } finally {
      db.close();
    }
    const file = await fetch(`${serve.url}/v1/assets/${v.video_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(file.status, 200);
    const mp4 = Buffer.from(await file.arrayBuffer());
    assert.equal(mp4.subarray(4, 8).toString('latin1'), 'ftyp', 'a whole MP4');
    assert.deepEqual(readdirSync(work), [], "the dead render's scratch was removed at the restart, the finished one's when it ended");
  } finally {
    await serve.kill();
    dir.dispose();
  }
});
