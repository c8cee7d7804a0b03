import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { EVENT_TYPES, type EventType } from '../../webhooks/types.js';
import { ControlPlaneApi } from '../control-plane-api.js';
import { CliError, printJson } from '../util.js';

interface TriggerFlags {
  widget: string;
  url: string;
  token?: string;
  data?: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Data of the right shape for each event type: fresh ids, so a repeated trigger of conversation.started is not a duplicate. */
export function sampleData(event: EventType): Record<string, unknown> {
  const conversation_id = `ses_sample${randomBytes(6).toString('hex')}`;
  const visitor_id = 'vis_sample';
  switch (event) {
    case 'conversation.started':
      return { conversation_id, visitor_id };
    case 'conversation.ended':
      return { conversation_id, visitor_id, ended_reason: 'visitor_left', message_count: 3, duration_seconds: 60 };
    case 'escalation.triggered':
      return { conversation_id, visitor_id, reason: 'sample escalation from brainstem webhooks trigger' };
    case 'lead.captured':
      return { conversation_id, visitor_id, has_email: true, has_phone: false };
    default: {
      const never: never = event;
      throw new Error(`unknown event ${String(never)}`);
    }
  }
}

/** `brainstem webhooks trigger EVENT --widget ID`: posts a sample event, so every subscribed endpoint gets a real, signed delivery. */
export function registerWebhookTrigger(webhooks: Command): void {
  webhooks
    .command('trigger')
    .description('send a sample event through a widget, so its subscribed endpoints receive a real signed delivery')
    .argument('<event>', `one of ${EVENT_TYPES.join(', ')}`)
    .requiredOption('--widget <id>', 'the widget (wid_…)')
    .option('--url <url>', 'the server (env BRAINSTEM_URL)', process.env.BRAINSTEM_URL ?? DEFAULT_URL)
    .option('--token <token>', "the widget's key (bwk_…) or a personal access token with the full scope (env BRAINSTEM_TOKEN)")
    .option('--data <json>', 'the event data as JSON, instead of the sample')
    .option('--json', 'print the answer as JSON')
    .action(async (event: string, flags: TriggerFlags) => {
      if (!(EVENT_TYPES as readonly string[]).includes(event)) throw new CliError(`EVENT must be one of ${EVENT_TYPES.join(', ')}, got "${event}"`);
      const token = flags.token ?? process.env.BRAINSTEM_TOKEN;
      if (!token) throw new CliError("no token: set BRAINSTEM_TOKEN (or --token) to the widget's key or a personal access token with the full scope");
      let data: unknown = sampleData(event as EventType);
      if (flags.data !== undefined) {
        try {
          data = JSON.parse(flags.data);
        } catch (err) {
          throw new CliError(`--data must be JSON: ${(err as Error).message}`);
        }
      }
      const api = new ControlPlaneApi(flags.url, token);
      // conversation.ended is accepted only for a conversation that started: the sample's own
      // conversation is started first (which its subscribers receive too).
      if (event === 'conversation.ended' && flags.data === undefined) {
        const { conversation_id, visitor_id } = data as { conversation_id: string; visitor_id: string };
        const started = await api.call('POST', `/v1/widgets/${encodeURIComponent(flags.widget)}/events`, {
          event: 'conversation.started',
          data: { conversation_id, visitor_id },
        });
        if (started.status !== 202) throw api.failure(`starting the sample conversation of widget ${flags.widget}`, started.status, started.body);
      }
      const res = await api.call('POST', `/v1/widgets/${encodeURIComponent(flags.widget)}/events`, { event, data });
      if (res.status !== 202) {
        const details = (res.body as { error?: { details?: { path: string; message: string }[] } } | null)?.error?.details;
        if (res.status === 422 && details) throw new CliError(`the event was refused: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`);
        throw api.failure(`sending ${event} to widget ${flags.widget}`, res.status, res.body);
      }
      const answer = res.body as { deliveries?: number; duplicate?: boolean };
      if (flags.json) printJson({ event, widget: flags.widget, data, ...answer });
      else {
        const n = answer.deliveries ?? 0;
        const what = answer.duplicate ? 'a duplicate (this conversation already started); nothing sent' : `${n} ${n === 1 ? 'delivery' : 'deliveries'} queued`;
        process.stdout.write(`${event} → widget ${flags.widget}: ${what}\n`);
      }
    });
}
