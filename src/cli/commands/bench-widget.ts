import type { Command } from 'commander';
import { CliError, parseInteger } from '../util.js';

/** `brainstem bench widget`: open chat-widget conversations and streamed replies, beside a bare SSE relay. */
export function registerBenchWidget(bench: Command): void {
  bench
    .command('widget')
    .description('chat widget: memory per open conversation, per-chunk and first-byte latency of streamed replies, replies/s, beside a bare uWS SSE relay')
    .option('--conversations <n>', 'open conversations, each with its event stream', '1000')
    .option('--streaming <n>', 'replies streaming at any moment', '100')
    .option('--tokens-per-second <n>', "the fake model's pace", '30')
    .option('--tokens <n>', 'tokens per reply', '40')
    .option('--seconds <n>', 'seconds of streaming per server', '20')
    .option('--json', 'print JSON only')
    .action(async (flags: { conversations: string; streaming: string; tokensPerSecond: string; tokens: string; seconds: string; json?: boolean }) => {
      const { runWidgetBench, formatTable } = await import('../../../bench/widget/run.js');
      const result = await runWidgetBench({
        conversations: parseInteger(flags.conversations, '--conversations', 1, 100_000),
        streaming: parseInteger(flags.streaming, '--streaming', 1, 10_000),
        tokensPerSecond: parseInteger(flags.tokensPerSecond, '--tokens-per-second', 1, 10_000),
        tokens: parseInteger(flags.tokens, '--tokens', 1, 1000),
        seconds: parseInteger(flags.seconds, '--seconds', 1, 3600),
        log: (line) => {
          if (!flags.json) process.stderr.write(`bench widget: ${line}\n`);
        },
      }).catch((err: Error) => {
        throw new CliError(`bench widget failed: ${err.message}`);
      });
      if (!flags.json) process.stdout.write(`${formatTable(result)}\n\n`);
      process.stdout.write(`${JSON.stringify(result, null, flags.json ? 2 : undefined)}\n`);
    });
}
