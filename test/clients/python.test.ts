import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signingVectors } from '../helpers/signing-vectors.js';
import { jsonOf, TICKS_FIXTURE } from './helpers.js';
import { CLIENT, client, driver, skip } from './python-client.js';
import { clientFixtureSuite } from './suite.js';

if (skip) console.log(`# Python client tests skipped: ${skip}`);
clientFixtureSuite(client);

test('python client: long lists are packed in order into bodies of at most 1,024 ticks and 4 MiB', { skip: skip ?? false }, async () => {
  const chunks = jsonOf(await driver('chunks', TICKS_FIXTURE, '2100'));
  assert.deepEqual(chunks.small, [1024, 1024, 52]);
  assert.ok(chunks.big.length > 1, JSON.stringify(chunks.big));
  for (const bytes of chunks.bigBytes) assert.ok(bytes <= 4 * 1024 * 1024, `${bytes} bytes`);
  assert.deepEqual(
    chunks.bigAgents,
    Array.from({ length: 2100 }, (_, i) => i),
  );
  assert.equal(chunks.bodiesAreJson, true);
});

test('python client: the README shows the signature of the first test vector', () => {
  const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
  assert.ok(readme.includes(signingVectors()[0]!.signature));
  assert.ok(readme.includes(`now=${signingVectors()[0]!.timestamp}`));
});
