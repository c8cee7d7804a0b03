import type { Command } from 'commander';
import { parseInteger } from '../util.js';

/** `brainstem bench webhooks`: outbox → receiver throughput beside a raw-POST baseline, and enqueue latency. */
export function registerBenchWebhooks(bench: Command): void {
  bench
    .command('webhooks')
    .description('deliveries/s from the outbox to a local receiver (1, 10, 100 endpoints) beside raw POSTs/s, and events accepted/s with p99 enqueue latency')
    .option('--deliveries <n>', 'deliveries per scenario', '20000')
    .option('--events <n>', 'events for the enqueue measurement', '20000')
    .option('--json', 'print JSON only')
    .action(async (flags: { deliveries: string; events: string; json?: boolean }) => {
      const deliveries = parseInteger(flags.deliveries, '--deliveries', 100, 10_000_000);
      const events = parseInteger(flags.events, '--events', 100, 10_000_000);
      // The harness lives in bench/ and is loaded only when this command runs.
      const { runWebhooksBench, formatTable } = await import('../../../bench/webhooks/run.js');
      const result = await runWebhooksBench({ deliveries, events });
      if (!flags.json) process.stdout.write(`${formatTable(result)}\n\n`);
      process.stdout.write(`${JSON.stringify(result, null, flags.json ? 2 : undefined)}\n`);
    });
}
