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
  brainToken: string;
  curlUrl: string;
  curlAuth: string;
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
    brainToken: field(/brain token\s+(bst_\S+)  \(send it as Authorization: Bearer, X-Brain-Token or \?token=\)$/m),
    curlAuth: field(/-H 'authorization: (Bearer \S+)'/),
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
      // The banner puts the sidecar's token on the line after the sidecar's, and the printed curl carries it.
      const at = first.lines.findIndex((l) => l.startsWith('  sidecar '));
      assert.match(first.lines[at + 1]!, /^ {2}brain token {2}bst_/);
      assert.equal(one.curlAuth, `Bearer ${one.brainToken}`);
      const res = await fetch(one.curlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: one.curlAuth },
        body: one.curlBody,
      });
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
      // Without the token, or with a wrong one, the sidecar refuses: a mod learns at once that its setup is wrong.
      const bare = await fetch(one.curlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: one.curlBody });
      assert.equal(bare.status, 401);
      const wrong = await fetch(`${one.curlUrl}?token=bst_wrong`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: one.curlBody });
      assert.equal(wrong.status, 401);
      const byHeader = await fetch(one.curlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-brain-token': one.brainToken },
        body: one.curlBody,
      });
      assert.equal(byHeader.status, 200);
      const byQuery = await fetch(`${one.curlUrl}?token=${one.brainToken}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: one.curlBody,
      });
      assert.equal(byQuery.status, 200);
      assert.equal((await call(one.sidecar, 'GET', '/status')).status, 401);
      const status = await call(one.sidecar, 'GET', '/status', { token: one.brainToken });
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
      assert.equal(two.brainToken, one.brainToken, 'the sidecar token is kept across restarts');
      const res = await fetch(two.curlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: two.curlAuth },
        body: two.curlBody,
      });
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
          'brainToken',
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
      assert.match(String(printed.brainToken), /^bst_[A-Za-z0-9_-]{43}$/);
      assert.equal((await call(String(printed.sidecar), 'GET', '/status', { token: String(printed.brainToken) })).status, 200);
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

test('brainstem up admits a webhook receiver on this machine without a flag; a private address needs --allow-private-webhooks', async () => {
  for (const allow of [false, true]) {
    const cwd = tempDir('brainstem-up-private-');
    try {
      const args = ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--json', ...(allow ? ['--allow-private-webhooks'] : [])];
      const run = await spawnCli(args, /^\{/, { cwd: cwd.path, env: { SERVICE_ADMIN_TOKEN: '' } });
      try {
        const printed = JSON.parse(run.match.input) as { api: string; email: string; password: string };
        const base = printed.api.replace(/\/v1$/, '');
        const token = (await call(base, 'POST', '/v1/auth/login', { body: { email: printed.email, password: printed.password } })).body.token as string;
        const widget = await call(base, 'POST', `/v1/widgets`, { token, body: { name: 'site' } });
        assert.equal(widget.status, 201);
        const add = (url: string) => call(base, 'POST', `/v1/widgets/${widget.body.id}/webhooks`, { token, body: { url, events: ['lead.captured'] } });
        // What `webhooks listen` prints: a loopback URL, plain http.
        for (const url of ['http://127.0.0.1:8765/', 'http://localhost:8765/hooks', 'http://[::1]:8765/']) {
          const endpoint = await add(url);
          assert.equal(endpoint.status, 201, `${url}: ${JSON.stringify(endpoint.body)}`);
        }
        const lan = await add('http://10.0.0.7/hooks');
        assert.equal(lan.status, allow ? 201 : 422, JSON.stringify(lan.body));
        if (!allow) assert.match(JSON.stringify(lan.body), /--allow-private-webhooks/);
      } finally {
        assert.equal(await stop(run.child), 0);
      }
    } finally {
      cwd.dispose();
    }
  }
});

test('brainstem up: SERVICE_BRAIN_TOKEN is the sidecar token instead of the stored one, which stays for the runs without it', async () => {
  const cwd = tempDir('brainstem-up-token-');
  try {
    const args = ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--json'];
    const first = await spawnCli(args, /^\{/, { cwd: cwd.path, env: { SERVICE_ADMIN_TOKEN: '' } });
    const stored = (JSON.parse(first.match.input) as { brainToken: string }).brainToken;
    assert.equal(await stop(first.child), 0);
    const mine = 'my-own-sidecar-token';
    const second = await spawnCli(args, /^\{/, { cwd: cwd.path, env: { SERVICE_ADMIN_TOKEN: '', SERVICE_BRAIN_TOKEN: mine } });
    try {
      const printed = JSON.parse(second.match.input) as { sidecar: string; brainToken: string };
      assert.equal(printed.brainToken, mine);
      assert.equal((await call(printed.sidecar, 'GET', '/status', { token: mine })).status, 200);
      assert.equal((await call(printed.sidecar, 'GET', '/status', { token: stored })).status, 401);
    } finally {
      assert.equal(await stop(second.child), 0);
    }
    const third = await spawnCli(args, /^\{/, { cwd: cwd.path, env: { SERVICE_ADMIN_TOKEN: '' } });
    try {
      assert.equal((JSON.parse(third.match.input) as { brainToken: string }).brainToken, stored);
    } finally {
      assert.equal(await stop(third.child), 0);
    }
  } finally {
    cwd.dispose();
  }
});

test('brainstem up --demo-dialogue: a character with a player near says a scripted line on a later tick, with no model configured', async () => {
  const cwd = tempDir('brainstem-up-demo-');
  try {
    const run = await spawnCli(['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--demo-dialogue'], /^Ctrl-C stops both\.$/, {
      cwd: cwd.path,
      env: { SERVICE_ADMIN_TOKEN: '' },
    });
    try {
      const printed = parse(run.lines);
      assert.ok(run.lines.some((l) => l.startsWith('  dialogue     scripted demo lines')));
      const says: string[] = [];
      for (let t = 10; t <= 12 && says.length === 0; t += 0.5) {
        const tick = JSON.parse(printed.curlBody) as { snapshot: { time_s: number } };
        tick.snapshot.time_s = t;
        const res = await fetch(printed.curlUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: printed.curlAuth },
          body: JSON.stringify(tick),
        });
        assert.equal(res.status, 200);
        const reply = (await res.json()) as { intents: { kind: string; text?: string }[] };
        for (const i of reply.intents) if (i.kind === 'Say') says.push(i.text!);
      }
      assert.equal(says.length, 1, 'one greeting');
      assert.match(says[0]!, /Alex/);
    } finally {
      assert.equal(await stop(run.child), 0);
    }
  } finally {
    cwd.dispose();
  }
});
