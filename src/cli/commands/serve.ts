import type { Command } from 'commander';
import { createLogger } from '../../log.js';
import { startEmbedded } from '../embedded.js';
import { CliError, parseAddr, untilSignal } from '../util.js';

interface ServeFlags {
  addr: string;
  db: string;
  tlsCert?: string;
  tlsKey?: string;
  allowPrivateWebhooks?: boolean;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('embedded mode: control plane, property-video API, webhooks and dashboard on one SQLite file')
    .option('--addr <host:port>', 'bind address', '127.0.0.1:8080')
    .option('--db <file>', 'SQLite database file', './brainstem.db')
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM); needs --tls-key')
    .option('--tls-key <file>', 'private key (PEM) for --tls-cert')
    .option('--allow-private-webhooks', 'let webhook URLs use plain http:// and private/loopback addresses (development and tests only)')
    .action(async (flags: ServeFlags) => {
      const { host, port } = parseAddr(flags.addr, '--addr');
      if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) throw new CliError('--tls-cert and --tls-key go together');
      const logger = createLogger();
      const adminToken = process.env.SERVICE_ADMIN_TOKEN;
      if (!adminToken) logger.warn('SERVICE_ADMIN_TOKEN is not set: the /v1/admin routes will refuse every request');
      const server = await startEmbedded({
        host,
        port,
        db: flags.db,
        adminToken,
        logger,
        allowPrivateWebhooks: flags.allowPrivateWebhooks === true,
        ...(flags.tlsCert && flags.tlsKey ? { tls: { certFile: flags.tlsCert, keyFile: flags.tlsKey } } : {}),
      });
      if (flags.allowPrivateWebhooks) logger.warn('--allow-private-webhooks: webhook URLs may reach private and loopback addresses over plain http');
      process.stdout.write(`brainstem serve listening on ${server.url} (db ${flags.db})\n`);
      await untilSignal();
      await server.close();
    });
}
