import { html } from '../html.js';
import { call } from '../api.js';
import { useLoad } from '../ui.js';
import type { SidecarConnection } from './connection.js';

/**
 * What the "LLM dialogue" switch can do on this server, from where its sidecar's lines come
 * from (its reports say): a switch that is on with no model behind it reads as a promise the
 * characters do not keep, so the line says so and how to give them a voice.
 */
export function DialogueStatus({ serverId, on }: { serverId: string; on: boolean }) {
  const s = useLoad(() => call<{ connection: SidecarConnection }>('GET', `/v1/servers/${serverId}`), [serverId]);
  const d = s.data?.connection.dialogue ?? null;
  const source = s.data ? (d?.source ?? 'unknown') : 'loading';
  let text: string;
  if (!s.data) text = '';
  else if (d === null) text = 'The sidecar has not said yet where its lines come from; it does in its next report.';
  else if (d.source === 'model')
    text = `The sidecar's lines come from a model${d.model ? ` (${d.model})` : ''}.${on ? '' : ' LLM dialogue is off in this bundle: characters stay silent.'}`;
  else if (d.source === 'demo')
    text = `The sidecar speaks the built-in demo lines (started with --demo-dialogue), no model.${on ? '' : ' LLM dialogue is off in this bundle.'}`;
  else
    text = on
      ? 'No model on the sidecar: with LLM dialogue on, characters stay silent. Give the sidecar SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL (any OpenAI-compatible server), or start it with --demo-dialogue.'
      : 'No model on the sidecar (SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL, or --demo-dialogue): characters stay silent either way.';
  return html`<p class=${`hint${on && d?.source === 'none' ? ' warn' : ''}`} id="dialogue-status" data-dialogue=${source} role="status">${text}</p>`;
}
