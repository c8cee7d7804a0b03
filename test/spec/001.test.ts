/**
 * Conformance with spec 001 (brain sidecar and control-plane API), section by section in the
 * spec's own order. Each case quotes the line it checks; the detailed behaviour of each part
 * is tested beside its code (test/controlplane, test/sidecar, test/brain).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Brain, DEFAULT_BUNDLE, type AgentId } from '../../brain/index.js';
import { startEmbedded } from '../../src/embedded/start.js';
import { DEFAULT_SIDECAR_ADDR } from '../../src/cli/commands/sidecar.js';
import { ControlPlaneClient } from '../../src/sidecar/link/control-plane-client.js';
import { report, serverWithKey, signed } from '../controlplane/helpers.js';
import { ADMIN_TOKEN, startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { cli, tempDir } from '../helpers/paths.js';
import { freePort } from '../helpers/taken-port.js';
import { fullTick, post, startTest } from '../sidecar/helpers.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function withServer(fn: (s: TestServer) => Promise<void>): Promise<void> {
  const s = await startTestServer();
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

// §1 "HTTPS only."
test('§1 "HTTPS only": plain HTTP is served on loopback only; a sidecar refuses a non-loopback http:// control plane', async () => {
  const dir = tempDir();
  try {
    await assert.rejects(startEmbedded({ host: '0.0.0.0', port: 0, db: join(dir.path, 'x.db') }), /refusing plain HTTP/);
    assert.throws(() => new ControlPlaneClient({ url: 'http://cp.example', serverId: '1', key: 'bsk_x' }), /refusing the plain-HTTP control plane/);
  } finally {
    dir.dispose();
  }
});

// §1 "All timestamps are RFC 3339 / ISO 8601 UTC strings."
test('§1 "All timestamps are RFC 3339 / ISO 8601 UTC strings": a ts with an offset comes back in UTC; every timestamp ends in Z', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { ts: '2026-11-25T14:00:00+02:00' }) });
    const feed = (await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token })).body;
    assert.equal(feed[0].ts, '2026-11-25T12:00:00.000Z');
    const usage = (await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token })).body;
    const versions = (await s.call('GET', `/v1/servers/${a.serverId}/config/versions`, { token })).body;
    const tenants = (await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN })).body;
    for (const ts of [usage.periodStart, usage.periodEnd, versions[0].publishedAt, tenants[0].createdAt]) assert.match(ts, ISO_UTC);
  }));

// §2.1 "version | unsigned 64-bit integer | Monotonic; increased on every publish."
test('§2.1 "version: unsigned 64-bit integer": exact JSON integers up to 2^53-1 are taken; above, or negative, is 422 on version', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const head = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    for (const version of [-1, 2 ** 53, '18446744073709551615']) {
      const body = JSON.stringify({ ...head, version: 0 }).replace('"version":0', `"version":${version}`);
      const r = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body });
      assert.equal(r.status, 422, String(version));
      assert.equal(r.body.error.details[0].path, 'version');
    }
  }));

// §2.1 "policy | object of booleans | ... any omitted key means on (all-on default)."
test('§2.1 "any omitted key means on": a bundle with an empty policy publishes and is served as given', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const head = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const put = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: { ...head, policy: {} } });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.policy, {});
  }));

// §2.1 the ConfigBundle table: version, policy (one boolean per named subsystem), game (object or null),
// flavor, population and speech with the fields and types the section lists.
test("§2.1 the served ConfigBundle has the spec's fields, keys and types; game is null or {name, premise, goal}", () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const b = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    assert.deepEqual(Object.keys(b).sort(), ['flavor', 'game', 'policy', 'population', 'speech', 'version']);
    assert.ok(Number.isSafeInteger(b.version) && b.version >= 0);
    const policyKeys = 'llm_dialogue voice_in voice_out emotes phrase_cache flavor human_factors emotional_events game_knowledge global_goals squads memory';
    assert.deepEqual(Object.keys(b.policy).sort(), policyKeys.split(' ').sort());
    for (const on of Object.values(b.policy)) assert.equal(on, true, 'the all-on default');
    assert.equal(b.game, null);
    assert.deepEqual(Object.keys(b.flavor).sort(), ['enabled', 'global', 'seed', 'themes', 'themes_per_bot']);
    assert.equal(typeof b.flavor.enabled, 'boolean');
    assert.equal(typeof b.flavor.global, 'string');
    for (const t of b.flavor.themes) assert.deepEqual([typeof t.text, typeof t.weight], ['string', 'number']);
    assert.ok(Number.isInteger(b.flavor.themes_per_bot) && Number.isInteger(b.flavor.seed));
    const traits = 'openness conscientiousness extraversion agreeableness neuroticism afk_proneness break_proneness fatigue_rate'.split(' ');
    assert.deepEqual(Object.keys(b.population).sort(), [...traits, 'session_min'].sort());
    for (const t of traits) assert.deepEqual(Object.keys(b.population[t]).sort(), ['mean', 'spread'], t);
    assert.equal(b.population.session_min.length, 2);
    assert.deepEqual(Object.keys(b.speech.limits).sort(), ['economy', 'per_5min', 'per_day', 'per_hour']);
    assert.ok(['Silent', 'Frugal', 'Normal', 'Chatty'].includes(b.speech.limits.economy));
    assert.deepEqual(Object.keys(b.speech.phrase_cache).sort(), ['allow_player_names', 'max_reuse', 'variety_target']);
    const game = { name: 'Dead Harbour', premise: 'The port fell.', goal: 'Get out by sea.' };
    const put = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: { ...b, game } });
    assert.deepEqual(put.body.game, game);
    const typo = await s.call('PUT', `/v1/servers/${serverId}/config`, {
      token,
      body: { ...put.body, speech: { ...b.speech, limits: { ...b.speech.limits, economy: 'Loud' } } },
    });
    assert.equal(typo.status, 422);
    assert.equal(typo.body.error.details[0].path, 'speech.limits.economy');
  }));

// §2.1 "Validation rules for a published bundle: themes_per_bot must not exceed the number of themes; limits must not be negative"
test('§2.1 validation: themes_per_bot above the themes and a negative limit are 422', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const head = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const bad = {
      ...head,
      flavor: { ...head.flavor, themes_per_bot: head.flavor.themes.length + 1 },
      speech: { ...head.speech, limits: { ...head.speech.limits, per_hour: -1 } },
    };
    const r = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: bad });
    assert.equal(r.status, 422);
    const paths = r.body.error.details.map((d: { path: string }) => d.path);
    assert.ok(paths.includes('flavor.themes_per_bot') && paths.includes('speech.limits.per_hour'), paths.join());
  }));

// §2.2 "Telemetry report: serverId string, ts timestamp, botCount, playersOnline, linesSpoken integer, spendUsd number, events array of {kind, count}"
test('§2.2 telemetry report: the spec fields are required and typed (serverId a string)', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const r = await signed(s, a.key, 'POST', '/v1/telemetry', { body: { serverId: a.serverId } });
    assert.equal(r.status, 422);
    const paths = r.body.error.details.map((d: { path: string }) => d.path).sort();
    assert.deepEqual(paths, ['botCount', 'events', 'linesSpoken', 'playersOnline', 'serverId', 'spendUsd', 'ts']);
  }));

// §2.3 "ConfigVersion: version (integer), publishedAt (timestamp), publishedBy (string), note (string)."
// §2.4 "UsageSummary: serverId, periodStart, periodEnd, linesSpoken, llmTokens, ttsCharacters, spendUsd."
// §2.5 "Tenant: id, name, plan, serverCount, monthlySpendUsd, status, createdAt."
test("§2.3–§2.5 ConfigVersion, UsageSummary and Tenant carry exactly the spec's fields (and no fewer)", () =>
  withServer(async (s) => {
    const t = await tenantSession(s);
    const a = await serverWithKey(s, t.token);
    const [v] = (await s.call('GET', `/v1/servers/${a.serverId}/config/versions`, { token: t.token })).body;
    assert.deepEqual(Object.keys(v).sort(), ['note', 'publishedAt', 'publishedBy', 'version']);
    const usage = (await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token: t.token })).body;
    assert.deepEqual(Object.keys(usage).sort(), ['linesSpoken', 'llmTokens', 'periodEnd', 'periodStart', 'serverId', 'spendUsd', 'ttsCharacters']);
    assert.equal(usage.serverId, String(a.serverId));
    const tenant = (await s.call('GET', `/v1/admin/tenants`, { token: ADMIN_TOKEN })).body.find((x: { id: number }) => x.id === t.tenantId);
    assert.deepEqual(Object.keys(tenant).sort(), ['createdAt', 'id', 'monthlySpendUsd', 'name', 'plan', 'serverCount', 'status']);
  }));

// §2.6 "Response object: agent (integer, same character) and intents (array). The intent set also carries posture"
// §4.1 "GET /health: Plain text body ok. POST /tick: 200 JSON {agent, intents}."
test('§2.6/§4.1 /health is "ok"; POST /tick answers {agent, intents, posture} for the same agent; the bearer gate when a token is set', async () => {
  const open = await startTest();
  const gated = await startTest({ token: 'sekrit' });
  try {
    const health = await fetch(`${open.url}/health`);
    assert.equal(await health.text(), 'ok');
    const r = await post(open.url, fullTick(42));
    assert.equal(r.status, 200);
    const body = r.json() as { agent: number; intents: { kind: string }[]; posture: string };
    assert.equal(body.agent, 42);
    assert.ok(Array.isArray(body.intents));
    assert.ok(['standing', 'crouched', 'prone'].includes(body.posture));
    assert.equal((await post(gated.url, fullTick(1))).status, 401);
    assert.equal((await post(gated.url, fullTick(1), 'json', { authorization: 'Bearer sekrit' })).status, 200);
    assert.equal((await fetch(`${gated.url}/health`)).status, 200);
  } finally {
    await open.close();
    await gated.close();
  }
});

// §1 "Observed reactive behaviours: a character patrols between two waypoints, faces and engages a hostile that comes into
// line of sight, a coward flees, a wounded one investigates a lost contact"; §2.6 "posture ... crouched at close range, prone
// for a long shot"; "Intent kinds mentioned: MoveTo, Engage"; "Planned inputs (waypoint routes ...) are supplied through the snapshot".
test('§1/§2.6 over POST /tick: patrol between two waypoints, face and engage (crouched close, prone far), a coward flees, a wounded one investigates', async () => {
  const sc = await startTest();
  try {
    const tick = async (agent: number, time_s: number, over: { pos?: object; health?: number; targets?: object[]; route?: object[] }, profile = {}) => {
      const r = await post(sc.url, {
        snapshot: {
          agent,
          time_s,
          self_state: {
            pos: over.pos ?? { x: 0, y: 8, z: 0 },
            heading_deg: 0,
            health: over.health ?? 100,
            blood: 5000,
            hunger: 0,
            thirst: 0,
            has_weapon: true,
            ammo: 30,
          },
          targets: over.targets ?? [],
          ...(over.route ? { route: over.route } : {}),
        },
        profile,
      });
      assert.equal(r.status, 200);
      return r.json() as { agent: number; posture: string; intents: { kind: string; to?: object; at?: object }[] };
    };
    const hostile = (x: number, visible = true) => ({ id: 7, kind: 'player', pos: { x, y: 8, z: 0 }, hostile: true, visible });
    const route = [
      { x: 0, y: 8, z: 0 },
      { x: 100, y: 8, z: 0 },
    ];
    let r = await tick(1, 0, { pos: { x: 50, y: 8, z: 0 }, route });
    assert.deepEqual(r.intents[0], { kind: 'MoveTo', to: route[0], speed: 'walk' });
    r = await tick(1, 1, { pos: { x: 0.5, y: 8, z: 0 }, route });
    assert.deepEqual(r.intents[0], { kind: 'MoveTo', to: route[1], speed: 'walk' }, 'on to the other waypoint');
    r = await tick(2, 0, { targets: [hostile(10)], route });
    assert.deepEqual(
      r.intents.slice(0, 2).map((i) => i.kind),
      ['Face', 'Engage'],
    );
    assert.equal(r.posture, 'crouched');
    r = await tick(3, 0, { targets: [hostile(200)] });
    assert.deepEqual(
      r.intents.slice(0, 2).map((i) => i.kind),
      ['Face', 'Engage'],
    );
    assert.equal(r.posture, 'prone');
    r = await tick(4, 0, { targets: [hostile(10)] }, { coward: true });
    assert.equal(r.intents[0]!.kind, 'Flee');
    await tick(5, 0, { targets: [hostile(30)] });
    r = await tick(5, 2, { health: 40, targets: [hostile(35, false)] });
    assert.deepEqual(r.intents[0], { kind: 'Investigate', at: { x: 30, y: 8, z: 0 } });
  } finally {
    await sc.close();
  }
});

// §4.1 "Configuration of the process is through environment variables: SERVICE_BRAIN_ADDR (bind address host:port),
// SERVICE_BRAIN_TOKEN (optional bearer token required from callers)".
test('§4.1 brainstem sidecar binds SERVICE_BRAIN_ADDR and requires SERVICE_BRAIN_TOKEN from callers of /tick', async () => {
  const addr = `127.0.0.1:${await freePort()}`;
  const child = spawn(process.execPath, [cli, 'sidecar', '--state', ''], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BRAINSTEM_LOG: 'silent', SERVICE_BRAIN_ADDR: addr, SERVICE_BRAIN_TOKEN: 'spec-token' },
  });
  try {
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    assert.ok(line.includes(addr), line);
    assert.equal(await (await fetch(`http://${addr}/health`)).text(), 'ok');
    assert.equal((await post(`http://${addr}`, fullTick(1))).status, 401);
    assert.equal((await post(`http://${addr}`, fullTick(1), 'json', { authorization: 'Bearer spec-token' })).status, 200);
  } finally {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
});

// §3 states: publish on the head → higher version; a stale base → 409 version_conflict; rollback → fresh higher version; rollback to a missing version → 404.
test('§3 configuration versions: publish, stale publish 409 version_conflict, rollback to a fresh head, rollback to nothing 404', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId, key } = await serverWithKey(s, token);
    const v1 = (await s.call('GET', `/v1/servers/${serverId}/config`, { token })).body;
    const v2 = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: { ...v1, game: { name: 'N', premise: 'P', goal: 'G' } } });
    assert.equal(v2.status, 200);
    assert.ok(v2.body.version > 1);
    const stale = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: v1 });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, 'version_conflict');
    const back = await s.call('POST', `/v1/servers/${serverId}/config/rollback`, { token, body: { version: 1 } });
    assert.equal(back.status, 200);
    assert.ok(back.body.version > v2.body.version);
    assert.equal(back.body.game, null);
    // "the next sidecar pull sees a different ETag and applies it"
    const pull = await signed(s, key, 'GET', `/v1/config?server=${serverId}`, { headers: { 'if-none-match': `"v${v2.body.version}"` } });
    assert.equal(pull.status, 200);
    assert.equal(pull.headers.get('etag'), `"v${back.body.version}"`);
    assert.equal(pull.body.game, null);
    assert.equal((await s.call('POST', `/v1/servers/${serverId}/config/rollback`, { token, body: { version: 99 } })).status, 404);
    assert.deepEqual(
      (await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token })).body.map((v: { version: number }) => v.version),
      [3, 2, 1],
    );
  }));

// §4.2 "GET /v1/config?server={id} ... ETag: "v{version}" ... If-None-Match ... 304 with an empty body."
// §4.2 "POST /v1/telemetry ... Returns 202 with {accepted: boolean, received: integer}."
test('§4.2 signed pull with ETag "v{version}" and 304 on If-None-Match; telemetry 202 {accepted, received}', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const pull = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`);
    assert.equal(pull.status, 200);
    assert.equal(pull.headers.get('etag'), `"v${pull.body.version}"`);
    const again = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=1`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const t = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId) });
    assert.equal(t.status, 202);
    assert.deepEqual(t.body, { accepted: true, received: 2 });
  }));

// §4.3 dashboard routes, "{id} is a server id and the caller must own it".
test('§4.3 every dashboard route answers its documented status for the owner', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    for (const path of ['config', 'config/versions', 'overview', 'roster', 'activity?limit=5', 'economy', 'usage']) {
      const r = await s.call('GET', `/v1/servers/${serverId}/${path}`, { token });
      assert.equal(r.status, 200, path);
    }
    assert.equal((await s.call('GET', '/v1/servers', { token })).body.length, 1);
    const plans = (await s.call('GET', '/v1/billing/plans', { token })).body;
    assert.deepEqual(plans.plans.map((p: { id: string }) => p.id).sort(), ['cloud', 'self-host', 'trial']);
  }));

// §4.3 "POST /v1/billing/checkout | plan or usage tier | Starts a checkout session."
test('§4.3 "plan or usage tier": checkout takes {plan} or {tier} and a completed one grants the plan', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s, 'trial');
    const byTier = await s.call('POST', '/v1/billing/checkout', { token, body: { tier: 'small' } });
    assert.equal(byTier.status, 201);
    const byPlan = await s.call('POST', '/v1/billing/checkout', { token, body: { plan: 'self-host' } });
    assert.equal(byPlan.status, 201);
    await fetch(byTier.body.url, { method: 'POST' });
    assert.equal((await s.call('GET', '/v1/auth/me', { token })).body.tenant.plan, 'starter');
  }));

// §4.4 "GET /v1/admin/tenants | Tenant[]; GET /v1/admin/tenants/{id} | Tenant with its servers; POST /v1/admin/tenants/{id}/suspend | {ok}"
test('§4.4 admin routes: tenants, drill-down with servers, suspend {ok}', () =>
  withServer(async (s) => {
    const t = await tenantSession(s);
    await serverWithKey(s, t.token);
    assert.equal((await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN })).status, 200);
    const one = await s.call('GET', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN });
    assert.equal(one.body.servers.length, 1);
    const sus = await s.call('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN });
    assert.equal(sus.body.ok, true);
    assert.equal((await s.call('GET', '/v1/servers', { token: t.token })).status, 403);
  }));

// §5.2 "Server key ... scoped to exactly one server id"; §5.4 "Admin token: required for every /v1/admin/* route"
// §5.6 "A request with an invalid signature, or a timestamp outside a window of plus or minus 300 seconds, is rejected with 401"
test('§5 auth: a key reads only its server; a session is no admin; bad signature, a replay and a timestamp 301 s off either way are 401, 299 s passes', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${b.serverId}`)).status, 403);
    assert.equal((await s.call('GET', '/v1/admin/tenants', { token })).status, 403);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/config`, { token: a.key })).status, 403);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`, { signWith: b.key })).status, 401);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=1`, { at: Date.now() - 301_000 })).status, 401);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=2`, { at: Date.now() - 299_000 })).status, 200);
    // "(replay protection)": the same signed request a second time is refused.
    const at = Date.now();
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=5`, { at })).status, 200);
    const replay = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=5`, { at });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.error.code, 'unauthorized');
    // "plus or minus": ahead of the server's clock as well.
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=3`, { at: Date.now() + 301_000 })).status, 401);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=4`, { at: Date.now() + 299_000 })).status, 200);
    // §5.2 "it can only read that server's config and post its telemetry"
    const foreign = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(b.serverId) });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.error.code, 'forbidden');
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId) })).status, 202);
    assert.equal((await s.call('GET', '/v1/servers', { token: a.key })).status, 403);
  }));

// §5.4 "Admin token: elevated; required for every /v1/admin/* route."
test('§5.4 every /v1/admin/* route: 401 without a credential, 403 with a session, a server key or an API key', () =>
  withServer(async (s) => {
    const t = await tenantSession(s);
    const { key } = await serverWithKey(s, t.token);
    const apiKey = (await s.call('POST', '/v1/api-keys', { token: t.token, body: { name: 'k' } })).body.key;
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/admin/tenants'],
      ['POST', '/v1/admin/tenants', { name: 'x', plan: 'trial' }],
      ['GET', `/v1/admin/tenants/${t.tenantId}`],
      ['PATCH', `/v1/admin/tenants/${t.tenantId}`, { plan: 'trial' }],
      ['POST', `/v1/admin/tenants/${t.tenantId}/suspend`],
      ['POST', `/v1/admin/tenants/${t.tenantId}/resume`],
      ['POST', `/v1/admin/tenants/${t.tenantId}/users`, { email: 'x@example.com', password: 'long enough' }],
    ];
    for (const [method, path, body] of routes) {
      const none = await s.call(method, path, body === undefined ? {} : { body });
      assert.equal(none.status, 401, `${method} ${path}`);
      assert.equal(none.body.error.code, 'unauthorized');
      for (const token of [t.token, key, apiKey]) {
        const r = await s.call(method, path, { token, ...(body === undefined ? {} : { body }) });
        assert.equal(r.status, 403, `${method} ${path} with ${token.slice(0, 4)}`);
        assert.equal(r.body.error.code, 'forbidden');
      }
    }
    const tenant = (await s.call('GET', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN })).body;
    assert.equal(tenant.plan, 'agency', 'nothing changed');
    assert.equal(tenant.status, 'active');
  }));

// §6 "known kinds: spoke, snap, squad, heard, plan, afk, spawn, logoff, block. These mirror the dashboard activity feed."
test('§6 known kinds are counted whatever the policy: spawn with every subsystem off', () => {
  const b = structuredClone(DEFAULT_BUNDLE);
  b.policy = Object.fromEntries(Object.keys(DEFAULT_BUNDLE.policy).map((k) => [k, false]));
  const brain = new Brain(b);
  brain.tick({
    snapshot: {
      agent: 1 as AgentId,
      time_s: 1,
      self_state: { pos: { x: 0, y: 0, z: 0 }, heading_deg: 0, health: 100, blood: 5000, hunger: 0, thirst: 0, has_weapon: false, ammo: 0 },
      targets: [],
    },
    profile: {},
  });
  assert.equal(brain.drainEvents().spawn, 1);
});

// §7 "Every non-2xx response has the body shape {error: {code, message}}"; "config_not_found (no server with the given id)".
test('§7 error shape; config_not_found for an unknown, malformed or foreign server id on every server route', () =>
  withServer(async (s) => {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    const { serverId } = await serverWithKey(s, b.token);
    for (const id of ['999', 'abc', String(serverId)]) {
      for (const path of ['', '/config', '/config/versions', '/overview', '/usage', '/keys']) {
        const r = await s.call('GET', `/v1/servers/${id}${path}`, { token: a.token });
        assert.equal(r.status, 404, `${id}${path}`);
        assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message']);
        assert.equal(r.body.error.code, 'config_not_found', `${id}${path}`);
      }
    }
    const bad = await s.call('POST', '/v1/servers', { token: a.token, body: '{' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'bad_request');
  }));

// §7 "429 | Rate limited."
test('§7 "429 | Rate limited." on control-plane routes: a session and a server key past their limits, with Retry-After and X-RateLimit-*', async () => {
  // Small limits so that the case sends a handful of requests; the defaults are tested beside the limiter.
  const s = await startTestServer({ limits: { session: { limit: 3, windowMs: 60_000 }, serverKey: { limit: 2, windowMs: 60_000 } } });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    let last = await s.call('GET', '/v1/servers', { token });
    for (let i = 0; i < 5 && last.status !== 429; i++) last = await s.call('GET', `/v1/servers/${a.serverId}/overview`, { token });
    assert.equal(last.status, 429);
    assert.equal(last.body.error.code, 'rate_limited');
    assert.match(last.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(last.headers.get('x-ratelimit-limit'), '3');
    assert.equal(last.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(last.headers.get('x-ratelimit-reset'));

    let pull = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=0`);
    for (let i = 1; i < 5 && pull.status !== 429; i++) pull = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=${i}`);
    assert.equal(pull.status, 429);
    assert.equal(pull.body.error.code, 'rate_limited');
    assert.match(pull.headers.get('retry-after') ?? '', /^\d+$/);
  } finally {
    await s.stop();
  }
});

// §8 "Signature timestamp tolerance ±300 s (above); activity limit default 20; Sidecar default bind 127.0.0.1:8088"
test('§8 limits: activity defaults to 20; the sidecar binds 127.0.0.1:8088 by default', () =>
  withServer(async (s) => {
    assert.equal(DEFAULT_SIDECAR_ADDR, '127.0.0.1:8088');
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const events = Array.from({ length: 30 }, (_, i) => ({ kind: `k${i}`, count: 1 }));
    await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { events }) });
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token })).body.length, 20);
  }));

// §9 "All control-plane routes are prefixed /v1"; "the ETag is "v{version}""; "a publish names the base version it edited".
test('§9 versioning: /v1 prefix only; ETag follows the published version; the base version decides', () =>
  withServer(async (s) => {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    assert.equal((await s.call('GET', '/servers', { token })).status, 404);
    const head = await s.call('GET', `/v1/servers/${serverId}/config`, { token });
    const put = await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: head.body });
    assert.equal(put.headers.get('etag'), `"v${put.body.version}"`);
    assert.equal((await s.call('PUT', `/v1/servers/${serverId}/config`, { token, body: head.body })).status, 409);
  }));
