/**
 * Regression: `brainstem up` printed a login and an admin token but no property-video API key,
 * so a newcomer could not call the property-video API with `Authorization: Bearer <API key>`
 * without logging in and issuing one first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ensureLocalStack } from '../../src/cli/local-stack.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import { hashToken } from '../../src/identity/tokens.js';
import { openDatabaseAt } from '../../src/store/database.js';
import { tempDir } from '../helpers/paths.js';
import { call, spawnCli, stop } from './helpers.js';

test('brainstem up prints an API key that the property-video API takes, in the banner and in --json', async () => {
  for (const json of [false, true]) {
    const cwd = tempDir('brainstem-up-api-key-');
    try {
      const args = ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', ...(json ? ['--json'] : [])];
      const run = await spawnCli(args, json ? /^\{/ : /^Ctrl-C stops both\.$/, { cwd: cwd.path, env: { SERVICE_ADMIN_TOKEN: '' } });
      try {
        const text = run.lines.join('\n');
        const printed = json ? (JSON.parse(run.match.input) as { api: string; apiKey: string }) : undefined;
        const api = printed?.api ?? /API\s+(http:\/\/\S+\/v1)/.exec(text)?.[1];
        const key = printed?.apiKey ?? /API key\s+(bpk_\S+)/.exec(text)?.[1];
        assert.ok(api && key, text);
        const base = api.replace(/\/v1$/, '');
        const created = await call(base, 'POST', '/v1/properties', { token: key, body: { title: 'Loft', address: '1 Quay' } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.equal((await call(base, 'GET', '/v1/assets', { token: key })).status, 200);
      } finally {
        assert.equal(await stop(run.child), 0);
      }
    } finally {
      cwd.dispose();
    }
  }
});

test('the stack keeps its API key across runs and replaces one that was revoked', async () => {
  const dir = tempDir('brainstem-up-api-key-reuse-');
  try {
    const location = { kind: 'sqlite', file: join(dir.path, 'brainstem.db') } as const;
    const first = await ensureLocalStack(location);
    const again = await ensureLocalStack(location);
    assert.equal(again.created, false);
    assert.equal(again.stack.apiKey, first.stack.apiKey);
    const database = openDatabaseAt(location);
    try {
      const identity = await openIdentityStore(database);
      const found = await identity.findApiKey(hashToken(first.stack.apiKey));
      assert.ok(found);
      assert.equal(await identity.revokeApiKey(found.tenant.id, found.keyId), true);
    } finally {
      await database.close();
    }
    const renewed = await ensureLocalStack(location);
    assert.notEqual(renewed.stack.apiKey, first.stack.apiKey);
    assert.match(renewed.stack.apiKey, /^bpk_/);
    assert.equal(renewed.stack.serverKey, first.stack.serverKey);
  } finally {
    dir.dispose();
  }
});
