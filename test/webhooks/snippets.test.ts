import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { startReceiver } from './receiver.js';
import { LEAD, webhookServer } from './setup.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

test(
  'the Python verification snippet in docs/webhooks.md accepts real deliveries and refuses the wrong secret',
  { skip: !hasPython && 'python3 not installed' },
  async () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'webhooks.md'), 'utf8');
    const snippet = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(snippet, 'docs/webhooks.md has a python block');
    const rx = await startReceiver();
    const { s, addEndpoint, post } = await webhookServer();
    const dir = tempDir();
    try {
      const generated = await addEndpoint({ url: rx.url, events: ['lead.captured'] });
      const own = await addEndpoint({ url: rx.url, events: ['lead.captured'], secret: 'plain shared secret' });
      const unpadded = await addEndpoint({
        url: rx.url,
        events: ['lead.captured'],
        secret: `whsec_${Buffer.alloc(32, 9).toString('base64').replace(/=+$/, '')}`,
      });
      const notBase64 = await addEndpoint({ url: rx.url, events: ['lead.captured'], secret: 'whsec_not*base64' });
      await post('lead.captured', LEAD);
      await rx.waitFor(4);
      const file = join(dir.path, 'deliveries.json');
      writeFileSync(
        file,
        JSON.stringify({
          deliveries: rx.received.map((r) => ({ body: r.body, headers: r.headers })),
          secrets: [generated.secret, own.secret, unpadded.secret, notBase64.secret],
        }),
      );
      const check = `${snippet}
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for dl in d["deliveries"]:
    body = dl["body"].encode()
    out.append([verify(body, dl["headers"], s) for s in d["secrets"]])
    out.append([verify(body, {"X-Service-Signature": dl["headers"]["x-service-signature"]}, s) for s in d["secrets"]])
print(json.dumps(out))
`;
      const run = spawnSync('python3', ['-c', check, file], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const results = JSON.parse(run.stdout) as boolean[][];
      // Each delivery verifies with exactly one of the secrets (of every kind), by either scheme.
      for (const pair of results) assert.equal(pair.filter(Boolean).length, 1, JSON.stringify(results));
    } finally {
      await s.stop();
      await rx.close();
      dir.dispose();
    }
  },
);

const hasCryptography = hasPython && spawnSync('python3', ['-c', 'import cryptography']).status === 0;

test(
  'the Python v1a snippet in docs/webhooks.md verifies real v1a and both deliveries with the JWKS, and refuses hmac ones and changed bodies',
  { skip: !hasCryptography && 'python3 with the cryptography package not installed' },
  async () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'webhooks.md'), 'utf8');
    const snippet = [...doc.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('def verify_v1a'));
    assert.ok(snippet, 'docs/webhooks.md has the v1a python block');
    const rx = await startReceiver();
    const { s, addEndpoint, post } = await webhookServer();
    const dir = tempDir();
    try {
      await addEndpoint({ url: `${rx.url}?v1a`, events: ['lead.captured'], signature_scheme: 'v1a' });
      await addEndpoint({ url: `${rx.url}?both`, events: ['lead.captured'], signature_scheme: 'both' });
      await addEndpoint({ url: `${rx.url}?hmac`, events: ['lead.captured'] });
      await post('lead.captured', LEAD);
      await rx.waitFor(3);
      const jwks = (await s.call('GET', '/v1/webhooks/keys')).body;
      const file = join(dir.path, 'deliveries.json');
      const ordered = ['?v1a', '?both', '?hmac'].map((q) => rx.received.find((r) => r.path.endsWith(q))!);
      writeFileSync(file, JSON.stringify({ jwks, deliveries: ordered.map((r) => ({ body: r.body, headers: r.headers })) }));
      const check = `${snippet}
import json, sys
d = json.load(open(sys.argv[1]))
keys = public_keys(d["jwks"])
print(json.dumps([[verify_v1a(x["body"].encode(), x["headers"], keys), verify_v1a(x["body"].encode() + b" ", x["headers"], keys)] for x in d["deliveries"]]))
`;
      const run = spawnSync('python3', ['-c', check, file], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), [
        [true, false],
        [true, false],
        [false, false],
      ]);
    } finally {
      await s.stop();
      await rx.close();
      dir.dispose();
    }
  },
);
