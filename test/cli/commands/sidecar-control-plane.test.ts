import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { controlPlaneFrom } from '../../../src/cli/commands/sidecar.js';
import { CliError } from '../../../src/cli/util.js';
import { cli } from '../../helpers/paths.js';

const ENV = { SERVICE_CONTROL_PLANE_URL: 'http://cp.example:8080', SERVICE_SERVER_ID: '7', SERVICE_SERVER_KEY: 'bsk_env' };

test('control-plane options: env alone, flags over env, intervals in seconds, default state dir per server', () => {
  const fromEnv = controlPlaneFrom({}, ENV, '/srv/game');
  assert.deepEqual(fromEnv, { url: 'http://cp.example:8080', serverId: '7', serverKey: 'bsk_env', stateDir: '/srv/game/.brainstem/sidecar-7' });
  const flags = controlPlaneFrom({ serverKey: 'bsk_flag', pollInterval: '0.25', telemetryInterval: '2', maxBackoff: '1', stateDir: 'st' }, ENV, '/srv/game');
  assert.equal(flags?.serverKey, 'bsk_flag');
  assert.equal(flags?.pollMs, 250);
  assert.equal(flags?.telemetryMs, 2000);
  assert.equal(flags?.maxBackoffMs, 1000);
  assert.equal(flags?.stateDir, '/srv/game/st');
  assert.equal(controlPlaneFrom({}, {}), null);
});

test('control-plane options: partial, mixed with --bundle, or malformed are one-line CLI errors', () => {
  assert.throws(
    () => controlPlaneFrom({ controlPlane: 'http://x' }, {}),
    (e: unknown) => e instanceof CliError && /--server-id .* and --server-key/.test(e.message),
  );
  assert.throws(
    () => controlPlaneFrom({ bundle: 'bundles/default' }, ENV),
    (e: unknown) => e instanceof CliError && /--bundle and --control-plane/.test(e.message),
  );
  assert.throws(() => controlPlaneFrom({ serverId: 'seven' }, ENV), /--server-id must be a positive integer/);
  assert.throws(() => controlPlaneFrom({ pollInterval: 'soon' }, ENV), /--poll-interval must be a number of seconds/);
  assert.throws(() => controlPlaneFrom({ pollInterval: '1' }, {}), /--poll-interval needs a control plane/);
});

test('brainstem sidecar with only --control-plane exits 1 with one line', () => {
  const run = spawnSync(process.execPath, [cli, 'sidecar', '--control-plane', 'http://127.0.0.1:1'], {
    encoding: 'utf8',
    env: { ...process.env, SERVICE_SERVER_ID: '', SERVICE_SERVER_KEY: '', SERVICE_CONTROL_PLANE_URL: '' },
  });
  assert.equal(run.status, 1);
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, /needs --server-id/);
});
