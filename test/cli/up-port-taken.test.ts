import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/paths.js';
import { withTakenPort } from '../helpers/taken-port.js';

test('up on a taken port: one line naming the flag that picks another (--addr for the server, --sidecar-addr for the sidecar)', async () => {
  const dir = tempDir();
  try {
    await withTakenPort(async (addr) => {
      const cases: [string[], RegExp][] = [
        [['up', '--addr', addr, '--data-dir', join(dir.path, 'up1')], /^brainstem: embedded server: .*already in use; .*give --addr HOST:PORT$/],
        [
          ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', addr, '--data-dir', join(dir.path, 'up2')],
          /^brainstem: sidecar: .*already in use; .*give --sidecar-addr HOST:PORT$/,
        ],
      ];
      await Promise.all(
        cases.map(async ([args, expected]) => {
          const r = await runCli(args, { SERVICE_ADMIN_TOKEN: '' });
          assert.equal(r.code, 1, args.join(' '));
          // up logs its start (info lines) before the port is tried; the failure is one line of its own.
          const failure = r.stderr
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('brainstem: '));
          assert.equal(failure.length, 1, r.stderr);
          assert.match(failure[0]!, expected, args.join(' '));
        }),
      );
    });
  } finally {
    dir.dispose();
  }
});
