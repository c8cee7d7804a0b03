import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { verifyWebhook } from '../../webhooks/verify.js';
import { generateSecret } from '../../signing/webhook.js';
import { EVENT_TYPES } from '../../webhooks/types.js';
import { addressText } from '../../http/address-text.js';
import { SECURITY_HEADERS } from '../../http/security-headers.js';
import { CliError, parseInteger, startError, untilSignal, type AddressFlags } from '../util.js';
import { registerWebhookTrigger } from './webhooks-trigger.js';
import { DEDUP_WINDOW_MS, DeliveryIds } from './webhooks-dedup.js';

interface ListenFlags {
  secret?: string;
  secretFile?: string;
  forwardTo?: string;
  port: string;
  host: string;
  json?: boolean;
  allowUntimestamped?: boolean;
}

const MAX_BODY = 1024 * 1024;
/** The environment variable `webhooks listen` takes its secret from (kept out of `ps`). */
export const WEBHOOK_SECRET_ENV = 'BRAINSTEM_WEBHOOK_SECRET';
/** How long a forward may take before it is reported as failed (the emitter's own delivery timeout). */
export const FORWARD_TIMEOUT_MS = 10_000;
/** Headers a verified delivery keeps when forwarded: its type, signatures, ids and timestamp. */
const FORWARDED_HEADERS = /^(content-type|user-agent|webhook-.*|x-service-.*)$/;

type SecretSource = { secret: string; from: 'flag' | 'env' | 'file' | 'generated' };

/** The secret from --secret-file, else the environment, else --secret (warned about), else a fresh one. */
export function listenSecret(flags: Pick<ListenFlags, 'secret' | 'secretFile'>, env: NodeJS.ProcessEnv): SecretSource {
  const given = [flags.secret !== undefined && '--secret', flags.secretFile !== undefined && '--secret-file'].filter(Boolean);
  if (given.length > 1) throw new CliError('--secret and --secret-file are two sources of the secret; give one');
  if (flags.secretFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.secretFile, 'utf8');
    } catch (err) {
      throw new CliError(`--secret-file ${flags.secretFile} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    // A trailing newline is an editor's, not the secret's.
    const secret = text.replace(/\r?\n$/, '');
    if (secret === '') throw new CliError(`--secret-file ${flags.secretFile} is empty`);
    return { secret, from: 'file' };
  }
  if (flags.secret !== undefined) {
    if (flags.secret === '') throw new CliError('--secret must not be empty');
    return { secret: flags.secret, from: 'flag' };
  }
  const fromEnv = env[WEBHOOK_SECRET_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return { secret: fromEnv, from: 'env' };
  return { secret: generateSecret(), from: 'generated' };
}

/** --forward-to: an absolute http(s) URL. */
function forwardUrl(value: string | undefined): URL | null {
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`--forward-to must be an absolute http:// or https:// URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--forward-to must be an http:// or https:// URL, got "${value}"`);
  return url;
}

/** Sends a verified delivery on, as it came (body and signing headers); resolves with the status or the failure. */
async function forward(to: URL, raw: Buffer, headers: http.IncomingHttpHeaders): Promise<{ status: number } | { error: string }> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (FORWARDED_HEADERS.test(name) && typeof value === 'string') out[name] = value;
  try {
    const res = await fetch(to, { method: 'POST', headers: out, body: raw, redirect: 'manual', signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { error: e.name === 'TimeoutError' ? `no answer within ${FORWARD_TIMEOUT_MS} ms` : (e.cause?.code ?? e.cause?.message ?? e.message) };
  }
}

/** Where `listen` says to register its URL when BRAINSTEM_URL is not set: `brainstem up`'s default address. */
const DEFAULT_SERVER_URL = 'http://127.0.0.1:8080';

/** A word safe in a POSIX shell as is, else the word in single quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * How to register the receiver's URL as a widget's webhook endpoint: the dashboard's clicks,
 * and the exact `curl` (the secret as the shell finds it: the generated one as is, the others
 * from where they came, so a secret given is never printed).
 */
export function registration(url: string, source: SecretSource, secretFile: string | undefined, server: string): { dashboard: string; curl: string } {
  const secret =
    source.from === 'generated'
      ? source.secret
      : source.from === 'env'
        ? `'"$${WEBHOOK_SECRET_ENV}"'`
        : source.from === 'file'
          ? `'"$(cat ${shellWord(secretFile ?? '')})"'`
          : '<the --secret you gave>';
  const body = `{"url":${JSON.stringify(url)},"events":${JSON.stringify(EVENT_TYPES)},"secret":"${secret}"}`;
  return {
    dashboard: `Dashboard › Widgets › <your widget> › Webhooks › Add an endpoint: URL ${url}${source.from === 'generated' ? ', secret the one above' : ', your secret'}`,
    curl: `curl -s -X POST ${server.replace(/\/+$/, '')}/v1/widgets/$WIDGET_ID/webhooks -H "authorization: Bearer $BRAINSTEM_TOKEN" -H 'content-type: application/json' -d '${body}'`,
  };
}

const SECRET_TEXT: Record<SecretSource['from'], string> = {
  flag: 'secret from --secret',
  env: `secret from ${WEBHOOK_SECRET_ENV}`,
  file: 'secret from --secret-file',
  generated: 'generated secret below',
};

type Print = (line: unknown) => void;

/**
 * The receiver: every POST verified (200 valid, 400 invalid, bodies past MAX_BODY cut off),
 * printed, and with --forward-to passed on once per delivery id.
 */
function receiver(flags: ListenFlags, secret: string, to: URL | null, print: Print): http.RequestListener {
  const forwarded = new DeliveryIds();
  return (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks, size);
      const result =
        req.method === 'POST'
          ? verifyWebhook(raw, req.headers, secret, { requireTimestamp: flags.allowUntimestamped !== true })
          : ({ ok: false, code: 'bad_body', message: `expected POST, got ${req.method}` } as const);
      const at = new Date().toISOString();
      if (result.ok) {
        res.writeHead(200, { 'content-type': 'application/json', ...SECURITY_HEADERS }).end('{"ok":true}');
        const shown = { at, valid: true, id: result.id, event: result.event, timestamp: result.timestamp, scheme: result.scheme, payload: result.payload };
        const line = `${at} ✔ ${result.event ?? '?'} ${result.id ?? ''} ${JSON.stringify(result.payload)}`;
        if (!to) print(flags.json ? shown : line);
        else if (result.id && !forwarded.first(result.id)) {
          // A retry of a delivery already passed on (the emitter retries until it is answered 2xx): acknowledged, not forwarded twice.
          if (flags.json) print({ ...shown, forwarded: { to: to.href, duplicate: true } });
          else print(`${line} → duplicate of a delivery forwarded in the last ${DEDUP_WINDOW_MS / 60_000} min, not forwarded again`);
        } else {
          // Printed once the forward is answered, so a line tells the whole story of its delivery.
          void forward(to, raw, req.headers).then((f) => {
            if (flags.json) print({ ...shown, forwarded: { to: to.href, ...f } });
            else print(`${line} → ${to.href} ${'status' in f ? f.status : `failed: ${f.error}`}`);
          });
        }
      } else {
        res
          .writeHead(400, { 'content-type': 'application/json', ...SECURITY_HEADERS })
          .end(JSON.stringify({ error: { code: result.code, message: result.message } }));
        if (flags.json) print({ at, valid: false, error: result.code, message: result.message });
        else print(`${at} ✘ refused (${result.code}): ${result.message}`);
      }
    });
  };
}

/** The flags that pick another address for the receiver, as its start error names them. */
const LISTEN_FLAGS: AddressFlags = { port: '--port PORT (0 picks a free one)', host: '--host HOST' };

/** Binds the receiver; an address in use or refused is one clear CLI error naming the flag that picks another. */
function listen(server: http.Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? `address ${addressText(host, port)} is already in use`
          : err.code === 'EACCES'
            ? `address ${addressText(host, port)} is not permitted (${err.code})`
            : `cannot listen on ${addressText(host, port)}: ${err.code ?? err.message}`;
      reject(startError(Object.assign(new Error(why), { code: err.code }), LISTEN_FLAGS));
    });
    server.listen(port, host, resolve);
  });
}

/** Where the receiver listens, the secret it generated (if it did), and how to register it. */
function printListening(
  print: Print,
  json: boolean,
  o: { url: string; from: SecretSource['from']; generated: string | undefined; to: URL | null; register: ReturnType<typeof registration> },
): void {
  const { url, from, generated, to, register } = o;
  if (json) {
    print({ listening: url, ...(generated ? { secret: generated } : {}), ...(to ? { forwardTo: to.href } : {}), register });
    return;
  }
  print(`listening on ${url} (verifying with the ${SECRET_TEXT[from]}${to ? `, forwarding to ${to.href}` : ''}; Ctrl-C to stop)`);
  if (generated) print(`secret: ${generated}  (give it as the endpoint's "secret" when you register ${url})`);
  print(`register it: ${register.dashboard}`);
  print(`   or: ${register.curl}`);
  print(
    "   (WIDGET_ID: the widget's id; BRAINSTEM_TOKEN: a session from POST /v1/auth/login or a personal access token. brainstem up takes this loopback URL as is; brainstem serve only with --allow-private-webhooks)",
  );
}

/** `brainstem webhooks listen`: a local receiver that verifies and prints each delivery. */
export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('tools for webhook receivers');
  registerWebhookTrigger(webhooks);
  webhooks
    .command('listen')
    .description('run a local receiver that verifies each delivery (200 valid, 400 invalid) and prints it')
    .option('--secret-file <file>', "read the endpoint's signing secret from this file (one line)")
    .option(
      '--secret <secret>',
      `the endpoint's signing secret on the command line (visible to every user in ps; prefer ${WEBHOOK_SECRET_ENV} or --secret-file)`,
    )
    .option('--forward-to <url>', 'also POST each verified delivery, body and signature headers unchanged, to this URL and print its status')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8765')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--json', 'print one JSON object per delivery')
    .option('--require-timestamp', 'refuse deliveries without the Standard Webhooks headers (the default)')
    .option('--allow-untimestamped', 'also accept X-Service-Signature alone, which binds no timestamp (a captured delivery can be replayed)')
    .action(async (flags: ListenFlags) => {
      const port = parseInteger(flags.port, '--port', 0, 65535);
      const { secret, from } = listenSecret(flags, process.env);
      const to = forwardUrl(flags.forwardTo);
      if (from === 'flag')
        process.stderr.write(
          `warning: --secret is visible to every user of this machine (ps, /proc); set ${WEBHOOK_SECRET_ENV} or use --secret-file instead\n`,
        );
      const print = (line: unknown) => process.stdout.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
      const server = http.createServer(receiver(flags, secret, to, print));
      await listen(server, flags.host, port);
      const bound = (server.address() as AddressInfo).port;
      const url = `http://${flags.host.includes(':') ? `[${flags.host}]` : flags.host}:${bound}/`;
      const stopped = untilSignal();
      const generated = from === 'generated' ? secret : undefined;
      const register = registration(url, { secret, from }, flags.secretFile, process.env.BRAINSTEM_URL || DEFAULT_SERVER_URL);
      printListening(print, flags.json === true, { url, from, generated, to, register });
      await stopped;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
}
