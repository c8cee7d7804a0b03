import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { call, spawnCli, stop } from './helpers.js';

interface Printed {
  api: string;
  sidecar: string;
  email: string;
  password: string;
  adminToken: string;
  curlUrl: string;
  curlBody: string;
  created: boolean;
}

function parse(lines: string[]): Printed {
  const text = lines.join('\n');
  const field = (re: RegExp): string => {
    const m = re.exec(text);
    assert.ok(m, `${re} not in:\n${text}`);
    return m[1]!;
  };
  return {
    api: field(/API\s+(http:\/\/\S+)\/v1/),
    sidecar: field(/sidecar\s+(http:\/\/\S+)/),
    email: field(/login\s+(\S+@\S+)\s+\/\s+\S+/),
    password: field(/login\s+\S+\s+\/\s+(\S+)/),
    adminToken: field(/admin token\s+(bsa_\S+)/),
    curlUrl: field(/curl -s -X POST (\S+)/),
    curlBody: field(/-d '([^']+)'/),
    created: /\(created in /.test(text),
  };
}

test('brainstem up brings the stack up from an empty directory, the printed curl answers 200, and a second run reuses the login', async () => {
  const cwd = tempDir('brainstem-up-');
  try {
    const args = ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0'];
    const env = { SERVICE_ADMIN_TOKEN: '' };
    const first = await spawnCli(args, /^Ctrl-C stops both\.$/, { cwd: cwd.path, env });
    const one = parse(first.lines);
    try {
      assert.equal(one.created, true);
      const res = await fetch(one.curlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: one.curlBody });
      assert.equal(res.status, 200);
      const reply = (await res.json()) as { agent: number; intents: unknown[] };
      assert.equal(reply.agent, 1);
      const login = await call(one.api, 'POST', '/v1/auth/login', { body: { email: one.email, password: one.password } });
      assert.equal(login.status, 200);
      const servers = await call(one.api, 'GET', '/v1/servers', { token: login.body.token });
      assert.equal(servers.body.length, 1);
      const tenants = await call(one.api, 'GET', '/v1/admin/tenants', { token: one.adminToken });
      assert.equal(tenants.status, 200);
      assert.equal(tenants.body[0].plan, 'agency');
      const status = await call(one.sidecar, 'GET', '/status');
      assert.equal(status.body.source, 'control-plane');
      assert.equal(status.body.version, 1);
    } finally {
      assert.equal(await stop(first.child, 'SIGINT'), 0);
    }
    assert.ok(existsSync(join(cwd.path, 'brainstem.db')));
    assert.ok(existsSync(join(cwd.path, '.brainstem', 'sidecar-1', 'bundle.json')));

    const second = await spawnCli(args, /^Ctrl-C stops both\.$/, { cwd: cwd.path, env });
    try {
      const two = parse(second.lines);
      assert.equal(two.created, false);
      assert.equal(two.email, one.email);
      assert.equal(two.password, one.password);
      assert.equal(two.adminToken, one.adminToken);
      const res = await fetch(two.curlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: two.curlBody });
      assert.equal(res.status, 200);
    } finally {
      assert.equal(await stop(second.child), 0);
    }
  } finally {
    cwd.dispose();
  }
});

test('brainstem up --json prints one JSON line; SERVICE_BRAIN_ADDR binds the sidecar when --sidecar-addr is absent', async () => {
  const cwd = tempDir('brainstem-up-json-');
  try {
    const run = await spawnCli(['up', '--addr', '127.0.0.1:0', '--json'], /^\{/, {
      cwd: cwd.path,
      env: { SERVICE_ADMIN_TOKEN: '', SERVICE_BRAIN_ADDR: '127.0.0.1:0' },
    });
    try {
      const printed = JSON.parse(run.match.input) as Record<string, unknown>;
      assert.deepEqual(
        Object.keys(printed).sort(),
        [
          'adminToken',
          'api',
          'apiKey',
          'bundleVersion',
          'chatDemo',
          'created',
          'dashboard',
          'dataDir',
          'db',
          'email',
          'password',
          'serverId',
          'sidecar',
        ].sort(),
      );
      // The demo chat page serves the widget tag of the stack's demo widget.
      const demo = await fetch(String(printed.chatDemo));
      assert.equal(demo.status, 200);
      assert.match(await demo.text(), /<script src="\/widget\.js" data-widget="wid_[a-z0-9]+" async><\/script>/);
      assert.equal(printed.created, true);
      assert.match(String(printed.sidecar), /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.notEqual(String(printed.sidecar), 'http://127.0.0.1:8088');
      const health = await fetch(`${String(printed.sidecar)}/health`);
      assert.equal(await health.text(), 'ok');
      const login = await call(String(printed.api).replace(/\/v1$/, ''), 'POST', '/v1/auth/login', {
        body: { email: printed.email, password: printed.password },
      });
      assert.equal(login.status, 200);
    } finally {
      assert.equal(await stop(run.child), 0);
    }
  } finally {
    cwd.dispose();
  }
});

test('brainstem up --allow-private-webhooks lets a local receiver be registered (refused without it)', async () => {
  for (const allow of [false, true]) {
    const cwd = tempDir('brainstem-up-private-');
    try {
      const args = ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--json', ...(allow ? ['--allow-private-webhooks'] : [])];
      const run = await spawnCli(args, /^\{/, { cwd: cwd.path, env: { SERVICE_ADMIN_TOKEN: '' } });
      try {
        const printed = JSON.parse(run.match.input) as { api: string; email: string; password: string };
        const base = printed.api.replace(/\/v1$/, '');
        const token = (await call(base, 'POST', '/v1/auth/login', { body: { email: printed.email, password: printed.password } })).body.token as string;
        const widget = await call(base, 'POST', '/v1/widgets', { token, body: { name: 'site' } });
        assert.equal(widget.status, 201);
        const endpoint = await call(base, 'POST', `/v1/widgets/${widget.body.id}/webhooks`, {
          token,
          body: { url: 'http://127.0.0.1:9/hooks', events: ['lead.captured'] },
        });
        assert.equal(endpoint.status, allow ? 201 : 422, JSON.stringify(endpoint.body));
      } finally {
        assert.equal(await stop(run.child), 0);
      }
    } finally {
      cwd.dispose();
    }
  }
});
