import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, runCli, tempDir } from '../helpers/paths.js';

const ENV = { BRAINSTEM_LOG: 'silent', SERVICE_ADMIN_TOKEN: 'bsa_data_dir_test' };
const COMMANDS: Record<string, string[]> = {
  serve: ['serve', '--addr', '127.0.0.1:0'],
  up: ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0'],
  sidecar: ['sidecar', '--addr', '127.0.0.1:0', '--workers', '0'],
};

function oneLine(r: { code: number; stderr: string }, expected: RegExp, what: string): void {
  assert.equal(r.code, 1, `${what}: ${r.stderr}`);
  assert.match(r.stderr.trimEnd(), expected, what);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, `${what}: ${r.stderr}`);
}

// The issue: sidecar --data-dir under a file started anyway and logged "brain state not saved"
// at every save, its memory never kept; serve and up said only "EEXIST" for the same mistake.
test('a data directory where a file stands: serve, up and sidecar exit 1 with one line saying a file is in the way (the sidecar started and never saved)', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    for (const [name, args] of Object.entries(COMMANDS)) {
      const r = await runCli([...args, '--data-dir', join(file, 'data')], ENV);
      oneLine(r, /^brainstem: cannot create the data directory \S+a-file\/data: a file \(or a link to nothing\) is in the way \(ENOTDIR\)$/, name);
    }
    const r = await runCli([...COMMANDS.serve!, '--db', join(file, 'x.db')], ENV);
    oneLine(r, /^brainstem: cannot create the data directory \S+a-file: a file \(or a link to nothing\) is in the way \(EEXIST\)$/, 'serve --db under a file');
  } finally {
    dir.dispose();
  }
});

// Node's recursive mkdir spins forever on a path under /proc or /sys (ENOENT for the child,
// EEXIST for the parent, again and again): serve, up and sidecar hung there with no output.
test(
  'a data directory under /proc or behind a link to nothing: serve, up and sidecar exit 1 with one line (they hung)',
  { skip: existsSync('/proc/self') ? false : 'needs /proc' },
  async () => {
    const dir = tempDir();
    try {
      symlinkSync(join(dir.path, 'not-mounted'), join(dir.path, 'disk'));
      const runs = Object.entries(COMMANDS).flatMap(([name, args]) => [
        [`${name} /proc`, runCli([...args, '--data-dir', '/proc/brainstem-no-such/data'], ENV)] as const,
        [`${name} link`, runCli([...args, '--data-dir', join(dir.path, 'disk', 'data')], ENV)] as const,
      ]);
      for (const [what, run] of runs) {
        const r = await run;
        if (what.endsWith('/proc'))
          oneLine(
            r,
            /^brainstem: cannot create the data directory \/proc\/brainstem-no-such\/data: a directory above it cannot hold one \(\/proc or \/sys\?\) \(ENOENT\)$/,
            what,
          );
        else oneLine(r, /^brainstem: cannot create the data directory \S+disk\/data: a file \(or a link to nothing\) is in the way \(EEXIST\)$/, what);
      }
    } finally {
      dir.dispose();
    }
  },
);

/**
 * Why the CLI cannot be run as uid 65534 here, or false when it can: it needs root (to switch
 * user), setpriv, and a checkout and temp directory that user may enter. A fresh clone under
 * a 0700 home directory is not one (issue 29: the test failed there instead of skipping).
 */
function cannotRunAsNobody(): string | false {
  if (process.getuid?.() !== 0) return 'needs root, to run the CLI as another user (uid 65534)';
  const probe = `const fs=require('fs');for(const p of process.argv.slice(1)){try{fs.accessSync(p,fs.constants.R_OK)}catch(e){process.stdout.write(p);process.exit(3)}}`;
  const where = [cli, fileURLToPath(new URL('../../src/cli/main.js', import.meta.url)), tmpdir()];
  const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', probe, ...where], { encoding: 'utf8' });
  if (r.error) return `needs setpriv (util-linux) to run the CLI as uid 65534: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}`;
  if (r.status === 3)
    return `uid 65534 cannot read ${r.stdout} (a directory above it is closed to other users, as a 0700 home is): the test runs the CLI as that user`;
  if (r.status !== 0) return `cannot run node as uid 65534 (exit ${r.status}): ${r.stderr.trim().split('\n')[0] ?? ''}`;
  return false;
}

test('a data directory this process cannot write: serve, up and sidecar exit 1 with one line saying so', { skip: cannotRunAsNobody() }, async () => {
  const dir = tempDir();
  try {
    // Readable and searchable by everyone, writable by root alone; the CLI runs as nobody.
    chmodSync(dir.path, 0o755);
    const locked = join(dir.path, 'locked');
    mkdirSync(locked, { mode: 0o755 });
    for (const [name, args] of Object.entries(COMMANDS)) {
      const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          'setpriv',
          ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, cli, ...args, '--data-dir', locked],
          { env: { ...process.env, ...ENV }, encoding: 'utf8' },
          (err, _stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
        );
      });
      oneLine(r, /^brainstem: the data directory \S+locked is not writable by this process \(EACCES\)$/, name);
    }
  } finally {
    dir.dispose();
  }
});

test('a database file that is no database, or a directory: serve and admin exit 1 with one line naming the database', async () => {
  const dir = tempDir();
  try {
    const junk = join(dir.path, 'junk.db');
    writeFileSync(junk, Buffer.alloc(4096, 0x5a));
    const folder = join(dir.path, 'folder.db');
    mkdirSync(folder);
    oneLine(
      await runCli([...COMMANDS.serve!, '--db', junk], ENV),
      /^brainstem: database sqlite:\S+junk\.db: file is not a database; give --db a brainstem SQLite file, or a path where none exists yet$/,
      'serve junk',
    );
    oneLine(await runCli([...COMMANDS.serve!, '--db', folder], ENV), /^brainstem: database sqlite:\S+folder\.db: EISDIR/, 'serve folder');
    oneLine(
      await runCli(['admin', '--db', junk, 'create-tenant', '--name', 'x'], ENV),
      /^brainstem: database sqlite:\S+junk\.db: file is not a database; give --db a brainstem SQLite file, or a path where none exists yet$/,
      'admin junk',
    );
  } finally {
    dir.dispose();
  }
});
