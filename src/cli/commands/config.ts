import { rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import diff, { type Difference } from 'microdiff';
import { BUNDLE_FILE, bundleDirOf } from '../../bundle-dir.js';
import type { ConfigBundle } from '../../../brain/index.js';
import { ControlPlaneApi } from '../control-plane-api.js';
import { CliError, parseInteger, printJson } from '../util.js';
import { makeDir } from '../../store/make-dir.js';

interface ConfigOptions {
  server: string;
  url: string;
  token?: string;
  dir: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';
/** `config diff` exits like diff(1): 0 same, 1 different, and 2 when it could not compare. */
const DIFF_TROUBLE = 2;

function common(cmd: Command): Command {
  return cmd
    .requiredOption('--server <id>', 'the server whose configuration this is')
    .option('--url <url>', 'the control plane (env BRAINSTEM_URL)', process.env.BRAINSTEM_URL ?? DEFAULT_URL)
    .option('--token <token>', 'a personal access token (bsu_…) or session token (env BRAINSTEM_TOKEN, preferred: a flag shows in ps)')
    .option('--dir <dir>', `the bundle directory (holds ${BUNDLE_FILE})`, '.')
    .option('--json', 'print the result as JSON');
}

function setup(opts: ConfigOptions, exitCode = 1): { api: ControlPlaneApi; serverId: number; file: string } {
  const token = opts.token ?? process.env.BRAINSTEM_TOKEN;
  if (!token)
    throw new CliError('no token: set BRAINSTEM_TOKEN (or --token) to a personal access token created on the Keys page of the dashboard (#/access)', exitCode);
  const serverId = parseInteger(opts.server, '--server', 1, Number.MAX_SAFE_INTEGER);
  try {
    new URL(opts.url);
  } catch {
    throw new CliError(`--url must be an absolute URL such as ${DEFAULT_URL}, got "${opts.url}"`, exitCode);
  }
  try {
    opts.dir = bundleDirOf(opts.dir);
  } catch (err) {
    throw new CliError(`--dir: ${(err as Error).message}`, exitCode);
  }
  return { api: new ControlPlaneApi(opts.url, token, exitCode), serverId, file: join(opts.dir, BUNDLE_FILE) };
}

async function headOf(api: ControlPlaneApi, serverId: number): Promise<ConfigBundle> {
  const res = await api.call('GET', `/v1/servers/${serverId}/config`);
  if (res.status !== 200) throw api.failure(`reading server ${serverId}'s configuration`, res.status, res.body);
  return res.body as ConfigBundle;
}

async function localOf(dir: string, exitCode: number): Promise<ConfigBundle> {
  // Loaded here, not at the top: the bundle rules and MessagePack are not needed to register the command.
  const { loadBundleDir } = await import('../../bundles.js');
  const loaded = await loadBundleDir(dir);
  if (!loaded.ok) {
    const reasons = loaded.problems.map((p) => `${p.path || '(bundle)'}: ${p.message}`).join('; ');
    throw new CliError(`${join(dir, BUNDLE_FILE)} is not a valid bundle: ${reasons}`, exitCode);
  }
  return loaded.bundle;
}

/** What differs between two bundles apart from the version each is based on. */
export function bundleChanges(from: ConfigBundle, to: ConfigBundle): Difference[] {
  return diff({ ...from, version: 0 }, { ...to, version: 0 });
}

const pathOf = (path: (string | number)[]): string => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');

export function describeChange(d: Difference): string {
  switch (d.type) {
    case 'CREATE':
      return `+ ${pathOf(d.path)}: ${JSON.stringify(d.value)}`;
    case 'REMOVE':
      return `- ${pathOf(d.path)}: ${JSON.stringify(d.oldValue)}`;
    case 'CHANGE':
      return `~ ${pathOf(d.path)}: ${JSON.stringify(d.oldValue)} -> ${JSON.stringify(d.value)}`;
    default: {
      const never: never = d;
      return String(never);
    }
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  // A first pull into a directory that does not exist yet makes it, as `git clone` would.
  await makeDir(dirname(file), 0o777);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

export function registerConfig(program: Command): void {
  const config = program.command('config').description('configuration bundles as code: pull, diff and publish against a control plane');

  common(config.command('pull').description(`write the server's current bundle into DIR/${BUNDLE_FILE}`)).action(async (opts: ConfigOptions) => {
    const { api, serverId, file } = setup(opts);
    const head = await headOf(api, serverId);
    await writeAtomically(file, `${JSON.stringify(head, null, 2)}\n`);
    if (opts.json) printJson({ server: serverId, version: head.version, file });
    else process.stdout.write(`server ${serverId}: pulled version ${head.version} into ${file}\n`);
  });

  common(
    config.command('diff').description(`show what DIR/${BUNDLE_FILE} changes against the server's current bundle (exit 0 same, 1 different, 2 trouble)`),
  ).action(async (opts: ConfigOptions) => {
    const { api, serverId, file } = setup(opts, DIFF_TROUBLE);
    const local = await localOf(opts.dir, DIFF_TROUBLE);
    const head = await headOf(api, serverId);
    const changes = bundleChanges(head, local);
    if (opts.json) printJson({ server: serverId, serverVersion: head.version, baseVersion: local.version, changes: changes.map(describeChange) });
    else {
      process.stdout.write(`server ${serverId} serves version ${head.version}; ${file} is based on version ${local.version}\n`);
      process.stdout.write(changes.length === 0 ? 'no changes\n' : `${changes.map(describeChange).join('\n')}\n`);
    }
    if (changes.length > 0) process.exitCode = 1;
  });

  common(
    config
      .command('publish')
      .description(`publish DIR/${BUNDLE_FILE} as the server's new version (validated first; nothing is published when it already matches)`),
  )
    .option('--note <text>', 'the history note for this version', 'published with brainstem config publish')
    .option('--force', "publish on top of the server's current version even if someone published after the version the file is based on")
    .action(async (opts: ConfigOptions & { note: string; force?: boolean }) => {
      const { api, serverId, file } = setup(opts);
      const local = await localOf(opts.dir, 1);
      const head = await headOf(api, serverId);
      const say = (value: Record<string, unknown>, line: string) => (opts.json ? printJson(value) : process.stdout.write(`${line}\n`));
      if (bundleChanges(head, local).length === 0) {
        say(
          { server: serverId, version: head.version, published: false },
          `server ${serverId} already serves ${file} (version ${head.version}); nothing published`,
        );
        return;
      }
      const base = opts.force ? head.version : local.version;
      // The server's own check of the note, loaded only here: its module brings the control plane's routes.
      const { noteHeaderValue } = await import('../../controlplane/config-routes.js');
      const res = await api.call('PUT', `/v1/servers/${serverId}/config`, { ...local, version: base }, { 'x-config-note': noteHeaderValue(opts.note) });
      if (res.status === 409) {
        throw new CliError(
          `server ${serverId} is at version ${head.version} but ${file} is based on version ${local.version}: someone published since it was pulled. ` +
            `See their changes with \`npx brainstem config diff --server ${serverId}\`, take them with \`config pull\`, or replace them with --force`,
        );
      }
      if (res.status === 422) {
        const details = (res.body as { error?: { details?: { path: string; message: string }[] } }).error?.details ?? [];
        throw new CliError(`the control plane refused ${file}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ') || 'validation failed'}`);
      }
      if (res.status !== 200) throw api.failure(`publishing to server ${serverId}`, res.status, res.body);
      const version = (res.body as ConfigBundle).version;
      say({ server: serverId, version, published: true }, `server ${serverId}: published ${file} as version ${version}`);
    });
}
