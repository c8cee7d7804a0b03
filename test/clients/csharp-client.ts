import { after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { clientsDir, driversDir, missingTool, run } from './helpers.js';

const PACKAGES = 'mono-mcs libmono-system-net-http4.0-cil';
const build = tempDir('brainstem-csharp-');
after(() => build.dispose());
const EXE = join(build.path, 'driver.exe');
export const EXAMPLE = join(build.path, 'example.exe');
const SOURCE = join(clientsDir, 'csharp', 'Brainstem.cs');

/** mcs as C# 6 (what Unity, .NET Standard 2.1 and Mono all take), warnings as errors. */
const mcs = (out: string, ...files: string[]) => run('mcs', ['-langversion:6', '-warnaserror', '-r:System.Net.Http', `-out:${out}`, ...files]);

/** Compiles the driver and the example with the client. Null when they built, else why the tests skip. */
async function compile(): Promise<string | null> {
  const missing = missingTool('mcs', '--version', PACKAGES) ?? missingTool('mono', '--version', PACKAGES);
  if (missing) return missing;
  const r = await mcs(EXE, SOURCE, join(driversDir, 'CsharpDriver.cs'));
  if (r.status !== 0 && /CS0006.*System\.Net\.Http/.test(r.stdout + r.stderr)) {
    return `Mono's System.Net.Http is missing (apt-get install libmono-system-net-http4.0-cil; CI installs it via .ci/run)`;
  }
  assert.equal(r.status, 0, `the C# client does not compile with mcs:\n${r.stdout}${r.stderr}`);
  const example = await mcs(EXAMPLE, SOURCE, join(clientsDir, 'csharp', 'Example.cs'));
  assert.equal(example.status, 0, `the C# example does not compile with mcs:\n${example.stdout}${example.stderr}`);
  return null;
}

/** Why the C# client's tests skip here, or null (then both programs are built). */
export const skip = await compile();
export const driver = (...args: string[]) => run('mono', [EXE, ...args]);
export const client = { name: 'c# client', skip, driver, signs: true, splitsLongLists: true };
