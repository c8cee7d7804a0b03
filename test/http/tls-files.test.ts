import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/paths.js';

/** A self-signed certificate and its key, written as PEM files in `dir` under `name`. */
function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'],
    {
      stdio: 'ignore',
    },
  );
  return { cert, key };
}

// The issue: every unusable certificate or key (a missing file, a file that is not PEM, a key of
// another certificate) stopped serve with uWebSockets.js's own line, "App construction failed".
test('serve --tls-cert/--tls-key that cannot be used exit 1 with one line naming the file and what is wrong (was "App construction failed")', async () => {
  const dir = tempDir();
  try {
    const a = selfSigned(dir.path, 'a');
    const b = selfSigned(dir.path, 'b');
    const text = join(dir.path, 'notes.txt');
    writeFileSync(text, 'not a certificate\n');
    const cases: [string, string, RegExp][] = [
      [join(dir.path, 'missing.crt'), a.key, /^brainstem: the TLS certificate \S+missing\.crt cannot be read \(ENOENT\)$/],
      [a.cert, join(dir.path, 'missing.key'), /^brainstem: the TLS private key \S+missing\.key cannot be read \(ENOENT\)$/],
      [dir.path, a.key, /^brainstem: the TLS certificate \S+ cannot be read \(EISDIR\)$/],
      [text, a.key, /^brainstem: the TLS certificate \S+notes\.txt is not a PEM certificate \(.+\)$/],
      [a.cert, text, /^brainstem: the TLS private key \S+notes\.txt is not a usable PEM private key \(.+\)$/],
      [a.key, a.cert, /^brainstem: the TLS certificate \S+a\.key is not a PEM certificate \(.+\)$/],
      [a.cert, b.key, /^brainstem: the TLS private key \S+b\.key does not belong to the certificate \S+a\.crt$/],
    ];
    for (const [cert, key, expected] of cases) {
      const r = await runCli(['serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'tls.db'), '--tls-cert', cert, '--tls-key', key], {
        BRAINSTEM_LOG: 'silent',
      });
      assert.equal(r.code, 1, `${cert} ${key}: ${r.stderr}`);
      assert.match(r.stderr.trimEnd(), expected);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    }
  } finally {
    dir.dispose();
  }
});
