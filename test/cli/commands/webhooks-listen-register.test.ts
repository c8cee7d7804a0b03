/**
 * Issue 29: `npm start`, then `webhooks listen`, then adding its URL on the dashboard answered
 * "must use https; start the server with --allow-private-webhooks", and the listen banner did
 * not say how to register it. Now `up` admits loopback URLs and listen prints the clicks and
 * the exact command; the command, run as printed, registers it on a server set up as `up` is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { cli } from '../../helpers/paths.js';
import { LEAD, webhookServer } from '../../webhooks/setup.js';

const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

for (const source of ['generated', 'env'] as const) {
  test(
    `webhooks listen (${source} secret) prints a curl that registers it on a loopback-admitting server, and deliveries then verify`,
    { skip: hasCurl ? false : 'curl is not installed (Debian: apt-get install curl)' },
    async () => {
      const { s, token, widgetId, post } = await webhookServer({ allowPrivateWebhooks: 'loopback' });
      const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
      const env = { ...process.env, BRAINSTEM_WEBHOOK_SECRET: source === 'env' ? secret : '', BRAINSTEM_URL: s.url };
      const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'], env });
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null');
      try {
        const ready = await next();
        assert.match(ready.register.dashboard, /^Dashboard › Widgets › <your widget> › Webhooks › Add an endpoint: URL http:\/\/127\.0\.0\.1:\d+\//);
        assert.ok(ready.register.curl.startsWith(`curl -s -X POST ${s.url}/v1/widgets/$WIDGET_ID/webhooks `), ready.register.curl);
        if (source === 'env') assert.doesNotMatch(ready.register.curl, new RegExp(secret.replace(/[+/=]/g, '\\$&')), 'a secret given is never printed');
        // Not execFileSync: the server answering the curl runs in this process.
        const { stdout: out } = await promisify(execFile)('sh', ['-c', ready.register.curl], {
          env: { ...env, WIDGET_ID: widgetId, BRAINSTEM_TOKEN: token },
          encoding: 'utf8',
        });
        const endpoint = JSON.parse(out) as { url: string; events: string[]; secret: string };
        assert.equal(endpoint.url, ready.listening);
        assert.equal(endpoint.secret, source === 'env' ? secret : ready.secret);
        await post('lead.captured', LEAD);
        const delivery = await next();
        assert.equal(delivery.valid, true);
        assert.equal(delivery.event, 'lead.captured');
      } finally {
        child.kill('SIGTERM');
        await s.stop();
      }
    },
  );
}

test('webhooks listen names the clicks and the command in its banner, and that serve needs the flag for it', async () => {
  const child = spawn(process.execPath, [cli, 'webhooks', 'listen', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BRAINSTEM_WEBHOOK_SECRET: '', BRAINSTEM_URL: '' },
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  try {
    const text: string[] = [];
    for (let i = 0; i < 5; i++) text.push((await lines.next()).value as string);
    const url = /^listening on (\S+)/.exec(text[0]!)![1]!;
    assert.match(text[1]!, /^secret: whsec_/);
    assert.equal(text[2], `register it: Dashboard › Widgets › <your widget> › Webhooks › Add an endpoint: URL ${url}, secret the one above`);
    assert.ok(text[3]!.startsWith('   or: curl -s -X POST http://127.0.0.1:8080/v1/widgets/$WIDGET_ID/webhooks '), text[3]);
    assert.match(text[4]!, /brainstem up takes this loopback URL as is; brainstem serve only with --allow-private-webhooks/);
  } finally {
    child.kill('SIGTERM');
  }
});
