import { parseInteger } from '../util.js';

/** `--conversation-idle MINUTES` and `--conversation-retention DAYS` of serve and up, as the chat-widget service takes them. */
export function conversationFlags(flags: { conversationIdle?: string; conversationRetention?: string }): { idleMs?: number; retentionDays?: number } {
  return {
    ...(flags.conversationIdle ? { idleMs: parseInteger(flags.conversationIdle, '--conversation-idle', 1, 7 * 24 * 60) * 60_000 } : {}),
    ...(flags.conversationRetention ? { retentionDays: parseInteger(flags.conversationRetention, '--conversation-retention', 1, 3650) } : {}),
  };
}
