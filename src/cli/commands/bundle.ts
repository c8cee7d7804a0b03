import type { Command } from 'commander';
import { bundleDirOf } from '../../bundle-dir.js';
import { CliError, printJson } from '../util.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ANY_SERVER, BUNDLE_SIGNATURE_FILE, keyIdOf, newKeyPair, publicKeyOfPrivate, signBundle } from '../../signing/bundle.js';
import { PRIVATE_FILE_MODE } from '../../store/files.js';

export function registerBundle(program: Command): void {
  const bundle = program.command('bundle').description('work with configuration bundle directories');
  bundle
    .command('validate')
    .description('validate a bundle directory with the same rules as a publish (exit 1 and every reason when invalid)')
    .argument('<dir>', 'bundle directory (holds bundle.json), or the bundle.json file itself')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      let bundleDir: string;
      try {
        bundleDir = bundleDirOf(dir);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      const { loadBundleDir } = await import('../../bundles.js');
      const result = await loadBundleDir(bundleDir);
      if (opts.json) printJson(result.ok ? { ok: true, version: result.bundle.version } : { ok: false, problems: result.problems });
      else if (result.ok) process.stdout.write(`${dir}: valid (version ${result.bundle.version})\n`);
      else for (const p of result.problems) process.stderr.write(`${dir}: ${p.path || '(bundle)'}: ${p.message}\n`);
      if (!result.ok) process.exitCode = 1;
    });

  bundle
    .command('sign')
    .description(
      `sign a bundle directory with an ed25519 private key: writes ${BUNDLE_SIGNATURE_FILE} beside bundle.json and prints the public key to give the sidecar (--bundle-key)`,
    )
    .argument('<dir>', 'bundle directory (holds bundle.json), or the bundle.json file itself')
    .requiredOption('--key <file>', 'ed25519 private key, PKCS#8 PEM (openssl genpkey -algorithm ed25519 -out FILE, or --new-key)')
    .option('--new-key', 'make the key file first when it does not exist (mode 0600)')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, opts: { key: string; newKey?: boolean; json?: boolean }) => {
      let bundleDir: string;
      try {
        bundleDir = bundleDirOf(dir);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      const keyFile = resolve(opts.key);
      if (!existsSync(keyFile)) {
        if (!opts.newKey) throw new CliError(`${keyFile} does not exist; make one with --new-key, or: openssl genpkey -algorithm ed25519 -out ${opts.key}`);
        writeFileSync(keyFile, newKeyPair().privatePem, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
      }
      let privatePem: string;
      let publicKey: string;
      try {
        privatePem = readFileSync(keyFile, 'utf8');
        publicKey = publicKeyOfPrivate(privatePem);
      } catch (err) {
        throw new CliError(`${keyFile} is not an ed25519 private key in PEM: ${(err as Error).message}`);
      }
      // Only a valid bundle is signed: a signature vouches for what the sidecar will apply.
      const { loadBundleDir } = await import('../../bundles.js');
      const result = await loadBundleDir(bundleDir);
      if (!result.ok) {
        for (const p of result.problems) process.stderr.write(`${dir}: ${p.path || '(bundle)'}: ${p.message}\n`);
        throw new CliError(`${dir} is not a valid bundle; nothing signed`);
      }
      const keyId = keyIdOf(publicKey);
      const signature = signBundle(privatePem, ANY_SERVER, result.text);
      const sigFile = join(bundleDir, BUNDLE_SIGNATURE_FILE);
      writeFileSync(sigFile, `${JSON.stringify({ algorithm: 'ed25519', keyId, publicKey, signature, version: result.bundle.version }, null, 2)}\n`);
      if (opts.json) printJson({ file: sigFile, version: result.bundle.version, keyId, publicKey });
      else process.stdout.write(`signed ${sigFile} (version ${result.bundle.version}, key ${keyId})\npublic key: ${publicKey}\n`);
    });
}
