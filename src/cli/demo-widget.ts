import { hashToken, newToken } from '../identity/tokens.js';
import type { TenantId } from '../identity/types.js';
import type { Embedded } from '../embedded/start.js';
import { defaultSettings } from '../webhooks/conversations/types.js';

export const DEMO_WIDGET_NAME = 'Demo widget';

export const DEMO_KNOWLEDGE = `brainstem is a toolkit for game servers: a brain sidecar beside the game server, and an embedded server with the control plane, the property-video API, the chat widget and the dashboard.

Installing: run npm start in a clone of the repository; it builds everything and starts a local stack with a demo login.

The chat widget: a site embeds it with one script tag. Visitors chat with an AI agent (any OpenAI-compatible model, or this built-in rule agent), can leave their details, and can ask for a person, who answers from the dashboard's Conversations page.

Webhooks: every conversation sends conversation.started, lead.captured, escalation.triggered and conversation.ended to the endpoints you register, signed with HMAC-SHA256.`;

/**
 * The local stack's demo widget (`brainstem up`): found by name, else created with some
 * knowledge for the rule agent, so the demo page answers at once. Its id for the demo page.
 */
export async function ensureDemoWidget(embedded: Embedded, tenantId: number): Promise<string> {
  const store = embedded.webhooks.service.store;
  const tenant = tenantId as TenantId;
  const found = (await store.listWidgets(tenant)).data.find((w) => w.name === DEMO_WIDGET_NAME);
  if (found) return found.id;
  const key = newToken('widgetKey');
  const { widget } = await store.createWidget(tenant, DEMO_WIDGET_NAME, { hash: hashToken(key), preview: key.slice(0, 8) });
  const settings = defaultSettings(DEMO_WIDGET_NAME);
  settings.greeting = 'Hi! Ask me about brainstem, leave your details, or ask for a person.';
  settings.agent.knowledge = DEMO_KNOWLEDGE;
  await embedded.conversations.store.saveSettings(widget.id, settings);
  return widget.id;
}
