import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { verifyWebhook } from '../../webhooks/verify.js';
import { CliError, parseInteger, untilSignal } from '../util.js';
import { registerWebhookTrigger } from './webhooks-trigger.js';

interface ListenFlags {
  secret: string;
  port: string;
  host: string;
  json?: boolean;
  requireTimestamp?: boolean;
}

const MAX_BODY = 1024 * 1024;

/** `brainstem webhooks listen`: a local receiver that verifies and prints each delivery. */
export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('tools for webhook receivers');
  registerWebhookTrigger(webhooks);
  webhooks
    .command('listen')
    .description('run a local receiver that verifies each delivery (200 valid, 400 invalid) and prints it')
    .requiredOption('--secret <secret>', "the endpoint's signing secret (whsec_… or your own)")
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8765')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--json', 'print one JSON object per delivery')
    .option('--require-timestamp', 'refuse deliveries without the Standard Webhooks headers')
    .action(async (flags: ListenFlags) => {
      const port = parseInteger(flags.port, '--port', 0, 65535);
      if (!flags.secret) throw new CliError('--secret must not be empty');
      const print = (line: unknown) => process.stdout.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) req.destroy();
          else chunks.push(c);
        });
        req.on('end', () => {
          const raw = Buffer.concat(chunks, size);
          const result = req.method === 'POST'
            ? verifyWebhook(raw, req.headers, flags.secret, { requireTimestamp: flags.requireTimestamp === true })
            : ({ ok: false, code: 'bad_body', message: `expected POST, got ${req.method}` } as const);
          const at = new Date().toISOString();
          if (result.ok) {
            res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
            if (flags.json) print({ at, valid: true, id: result.id, event: result.event, timestamp: result.timestamp, scheme: result.scheme, payload: result.payload });
            else print(`${at} ✔ ${result.event ?? '?'} ${result.id ?? ''} ${JSON.stringify(result.payload)}`);
          } else {
            res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: result.code, message: result.message } }));
            if (flags.json) print({ at, valid: false, error: result.code, message: result.message });
            else print(`${at} ✘ refused (${result.code}): ${result.message}`);
          }
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new CliError(`cannot listen on ${flags.host}:${port}: ${err.message}`)));
        server.listen(port, flags.host, resolve);
      });
      const bound = (server.address() as AddressInfo).port;
      const url = `http://${flags.host.includes(':') ? `[${flags.host}]` : flags.host}:${bound}/`;
      if (flags.json) print({ listening: url });
      else print(`listening on ${url} (verifying with the given secret; Ctrl-C to stop)`);
      await untilSignal();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
}
