/**
 * The Unity package: its layout (package.json, Runtime/ with an .asmdef, Samples~/), the C#
 * client it carries, and its director and characters compiled with the sample by Mono's mcs
 * against a stand-in for the part of UnityEngine they use (test/clients/drivers/unity), then
 * run frame by frame against a real sidecar: UnityWebRequest does real HTTP off the main
 * thread and `completed` is raised on the main thread on a later frame, as Unity does. What
 * the stand-in cannot show: Unity's own scheduling, NavMesh movement and physics.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { clientsDir, driversDir, missingTool, run, startTokenSidecar, TOKEN } from './helpers.js';

const PACKAGE = join(clientsDir, 'unity', 'com.brainstem.client');
const RUNTIME = join(PACKAGE, 'Runtime');
const SAMPLE = join(PACKAGE, 'Samples~', 'PatrolAndReact');
const build = tempDir('brainstem-unity-');
after(() => build.dispose());
const EXE = join(build.path, 'unity.exe');

async function compile(): Promise<string | null> {
  const missing = missingTool('mcs', '--version', 'mono-mcs') ?? missingTool('mono', '--version', 'mono-runtime');
  if (missing) return missing;
  const sources = [
    join(driversDir, 'unity', 'UnityEngine.cs'),
    join(driversDir, 'unity', 'UnityDriver.cs'),
    ...readdirSync(RUNTIME)
      .filter((f) => f.endsWith('.cs'))
      .map((f) => join(RUNTIME, f)),
    ...readdirSync(SAMPLE)
      .filter((f) => f.endsWith('.cs'))
      .map((f) => join(SAMPLE, f)),
  ];
  const r = await run('mcs', ['-langversion:6', '-warnaserror', '-r:System.Net.Http', `-out:${EXE}`, ...sources]);
  if (r.status !== 0 && /CS0006.*System\.Net\.Http/.test(r.stdout + r.stderr))
    return `Mono's System.Net.Http is missing (apt-get install libmono-system-net-http4.0-cil; CI installs it via .ci/run)`;
  assert.equal(r.status, 0, `the Unity package does not compile with mcs:\n${r.stdout}${r.stderr}`);
  return null;
}
const skip = await compile();
if (skip) console.log(`# Unity package tests skipped: ${skip}`);

interface Report {
  sent: number;
  applied: number;
  failed: number;
  replied: number;
  engaged: number;
  doing: string;
  moved: boolean;
  logs: string[];
}
async function scene(url: string, token: string, guards: number, seconds: number, playerMetres?: number): Promise<Report> {
  const args = [EXE, url, token, String(guards), String(seconds)];
  if (playerMetres !== undefined) args.push(String(playerMetres));
  const r = await run('mono', args);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Report;
}

test('unity package: a UPM package with Runtime/ and its .asmdef, and the sample it lists', () => {
  const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { name: string; version: string; unity: string; samples: { path: string }[] };
  assert.match(pkg.name, /^com\.[a-z0-9-]+\.[a-z0-9.-]+$/);
  assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
  assert.match(pkg.unity, /^\d{4}\.\d$/);
  for (const s of pkg.samples) assert.ok(existsSync(join(PACKAGE, s.path)), s.path);
  const asmdef = JSON.parse(readFileSync(join(RUNTIME, 'Brainstem.Runtime.asmdef'), 'utf8')) as { name: string };
  assert.equal(asmdef.name, 'Brainstem.Runtime');
  assert.ok(existsSync(join(PACKAGE, 'README.md')));
});

test('unity package: carries the C# client, byte for byte', () => {
  assert.equal(readFileSync(join(RUNTIME, 'Brainstem.cs'), 'utf8'), readFileSync(join(clientsDir, 'csharp', 'Brainstem.cs'), 'utf8'));
});

test('unity package: guards patrol and react to a player near them, replies applied on the main thread', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const out = await scene(sidecar.url, TOKEN, 3, 2, 8);
    assert.equal(out.failed, 0, JSON.stringify(out.logs));
    assert.equal(out.replied, 3);
    assert.ok(out.engaged >= 1, `a guard engages the player 8 m away: ${JSON.stringify(out)}`);
    assert.deepEqual(out.logs, []);
  } finally {
    await sidecar.close();
  }
});

test('unity package: 100 characters go in one batch per cadence, every one answered', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const out = await scene(sidecar.url, TOKEN, 100, 2);
    assert.equal(out.failed, 0, JSON.stringify(out.logs));
    assert.equal(out.replied, 100);
    assert.ok(out.moved, 'the first guard walks its route');
  } finally {
    await sidecar.close();
  }
});

test('unity package: a wrong or missing token is logged as an error naming the fix', { skip: skip ?? false }, async () => {
  const sidecar = await startTokenSidecar();
  try {
    const wrong = await scene(sidecar.url, 'not-the-token', 3, 1);
    assert.equal(wrong.replied, 0);
    assert.ok(wrong.failed >= 1);
    assert.ok(
      wrong.logs.some((l) => /call failed: unauthorized.*brain token/.test(l)),
      JSON.stringify(wrong.logs),
    );
    const missing = await scene(sidecar.url, '-', 3, 1);
    assert.ok(
      missing.logs.some((l) => /no token set/.test(l)),
      JSON.stringify(missing.logs),
    );
    assert.ok(
      missing.logs.some((l) => /unauthorized/.test(l)),
      JSON.stringify(missing.logs),
    );
  } finally {
    await sidecar.close();
  }
});
