import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, messageOf } from '../api.js';
import { Chart } from '../chart.js';
import { ErrorBox, Notice, TextField, fmtTime, useInterval, useLoad } from '../ui.js';
import { KNOWLEDGE_MAX_BYTES } from '../server-mirror.js';

// The chat-widget pages of a widget's settings: appearance, agent and allowed origins (with the
// embed snippet), the Conversations page (live list, transcript, lead, hand-off) and the
// conversation analytics beside Analytics › Webhooks.

interface Settings {
  id: string;
  name: string;
  color: string;
  greeting: string;
  allowed_origins: string[];
  agent: { instructions: string; knowledge: string; model: string | null; base_url: string | null; api_key_set: boolean };
}

interface Conversation {
  id: string;
  visitor_id: string;
  status: 'open' | 'ended';
  handler: 'agent' | 'human';
  escalated: boolean;
  has_lead: boolean;
  message_count: number;
  started_at: string;
  last_activity_at: string;
  ended_at: string | null;
  ended_reason: string | null;
}

interface Message {
  seq: number;
  role: 'visitor' | 'agent' | 'operator';
  text: string;
  created_at: string;
}

interface ConversationDetail extends Conversation {
  messages: Message[];
  lead: { name: string | null; email: string | null; phone: string | null; created_at: string } | null;
}

/** How often the live pages ask again (ms). */
const LIVE_MS = 2000;

/** Appearance, agent and allowed origins of a widget, and the tag that embeds it. */
export function WidgetAppearance({ widgetId }: { widgetId: string }) {
  const settings = useLoad(() => call<Settings>('GET', `/v1/widgets/${widgetId}/settings`), [widgetId]);
  return settings.data
    ? html`<${SettingsForm} widgetId=${widgetId} initial=${settings.data} onSaved=${settings.reload} />`
    : html`<${ErrorBox} error=${settings.error} />`;
}

/** The tag that embeds the widget, with a button that copies it. */
function EmbedCard({ widgetId }: { widgetId: string }) {
  const [copied, setCopied] = useState(false);
  const snippet = `<script src="${location.origin}/widget.js" data-widget="${widgetId}" async></script>`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(snippet);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return html`<div class="card">
    <h3 class="h3">Embed</h3>
    <p class="hint">Paste this tag into every page that should show the chat (its origin must be listed below).</p>
    <div class="row">
      <code class="secret" data-embed>${snippet}</code> <button type="button" onClick=${copy}>${copied ? 'Copied' : 'Copy embed code'}</button>
    </div>
  </div>`;
}

/** The agent's part of the form: one text state per field, as the inputs hold it. */
interface AgentDraft {
  instructions: string;
  knowledge: string;
  model: string;
  baseUrl: string;
  apiKey: string;
}

/** The agent's persona, knowledge, model, base URL and API key (write-only: the page only knows whether one is set). */
function AgentFields({
  agent,
  onAgent,
  fields,
  apiKeySet,
}: {
  agent: AgentDraft;
  onAgent: (a: AgentDraft) => void;
  fields: Record<string, string>;
  apiKeySet: boolean;
}) {
  const set = (k: keyof AgentDraft) => (v: string) => onAgent({ ...agent, [k]: v });
  return html`<h3 class="h3">Agent</h3>
    <${TextField}
      id="w-instructions"
      label="Persona and instructions"
      value=${agent.instructions}
      onValue=${set('instructions')}
      maxLength=${4000}
      multiline=${true}
      error=${fields['agent.instructions']}
    />
    <${TextField}
      id="w-knowledge"
      label="Knowledge"
      value=${agent.knowledge}
      onValue=${set('knowledge')}
      multiline=${true}
      hint=${`What the agent answers from (paragraphs separated by blank lines), at most ${KNOWLEDGE_MAX_BYTES / 1024} KB.`}
      error=${fields['agent.knowledge']}
    />
    <${TextField}
      id="w-model"
      label="Model (empty: the server's, or the built-in rule agent)"
      value=${agent.model}
      onValue=${set('model')}
      maxLength=${200}
      error=${fields['agent.model']}
    />
    <${TextField}
      id="w-base-url"
      label="OpenAI-compatible base URL (empty: the server's)"
      value=${agent.baseUrl}
      onValue=${set('baseUrl')}
      maxLength=${512}
      error=${fields['agent.base_url']}
    />
    <${TextField}
      id="w-api-key"
      label=${apiKeySet ? 'API key (set; type a new one to replace it)' : 'API key'}
      value=${agent.apiKey}
      onValue=${set('apiKey')}
      type="password"
      autocomplete="off"
      error=${fields['agent.api_key']}
    />`;
}

/** The PATCH body: origins one per line, blank model and base URL as null (the server's), the key only when typed. */
function settingsPatch(s: { name: string; color: string; greeting: string; origins: string }, a: AgentDraft) {
  const agent: Record<string, string | null> = {
    instructions: a.instructions,
    knowledge: a.knowledge,
    model: a.model.trim() || null,
    base_url: a.baseUrl.trim() || null,
  };
  if (a.apiKey) agent.api_key = a.apiKey;
  return {
    name: s.name,
    color: s.color,
    greeting: s.greeting,
    allowed_origins: s.origins
      .split('\n')
      .map((o) => o.trim())
      .filter(Boolean),
    agent,
  };
}

function SettingsForm({ widgetId, initial, onSaved }: { widgetId: string; initial: Settings; onSaved: () => Promise<void> }) {
  const [name, setName] = useState(initial.name);
  const [color, setColor] = useState(initial.color);
  const [greeting, setGreeting] = useState(initial.greeting);
  const [origins, setOrigins] = useState(initial.allowed_origins.join('\n'));
  const [agent, setAgent] = useState<AgentDraft>({
    instructions: initial.agent.instructions,
    knowledge: initial.agent.knowledge,
    model: initial.agent.model ?? '',
    baseUrl: initial.agent.base_url ?? '',
    apiKey: '',
  });
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setFields({});
    setSaved(false);
    try {
      await call('PATCH', `/v1/widgets/${widgetId}`, { body: settingsPatch({ name, color, greeting, origins }, agent) });
      setAgent((a) => ({ ...a, apiKey: '' }));
      setSaved(true);
      await onSaved();
    } catch (err) {
      if (err instanceof ApiError) setFields(byPath(err.details));
      setError(messageOf(err));
    }
  };

  return html`<div>
    <h2>Chat widget</h2>
    <${EmbedCard} widgetId=${widgetId} />
    <form class="card" onSubmit=${save} aria-label="Chat widget settings">
      <${TextField} id="w-name" label="Name shown in the chat" value=${name} onValue=${setName} maxLength=${200} error=${fields.name} />
      <${TextField} id="w-color" label="Colour" value=${color} onValue=${setColor} type="color" error=${fields.color} />
      <${TextField} id="w-greeting" label="Greeting" value=${greeting} onValue=${setGreeting} maxLength=${500} multiline=${true} error=${fields.greeting} />
      <${TextField}
        id="w-origins"
        label="Allowed origins (one per line)"
        value=${origins}
        onValue=${setOrigins}
        multiline=${true}
        hint="Pages from these origins may use the widget, e.g. https://shop.example. This server's own pages always may."
        error=${Object.entries(fields).find(([k]) => k.startsWith('allowed_origins'))?.[1]}
      />
      <${AgentFields} agent=${agent} onAgent=${setAgent} fields=${fields} apiKeySet=${initial.agent.api_key_set} />
      <button type="submit">Save chat settings</button>
      ${saved ? html`<${Notice}>Saved.<//>` : null}
      <${ErrorBox} error=${error} />
    </form>
  </div>`;
}

const roleLabel = (r: Message['role']) => (r === 'visitor' ? 'Visitor' : r === 'agent' ? 'Agent' : 'Operator');

/** The live list of a widget's conversations, and the one selected. */
export function ConversationsPage({ widgetId, selected }: { widgetId: string; selected: string | undefined }) {
  const [status, setStatus] = useState<'' | 'open' | 'ended'>('');
  const list = useLoad(
    () => call<{ data: Conversation[] }>('GET', `/v1/widgets/${widgetId}/conversations?limit=100${status ? `&status=${status}` : ''}`),
    [widgetId, status],
  );
  useInterval(() => void list.reload(), LIVE_MS);
  const base = `#/widgets/${widgetId}/settings/conversations`;
  return html`<div class="conversations">
    <h2>Conversations</h2>
    <div class="row">
      <label for="conv-status">Show</label>
      <select id="conv-status" value=${status} onChange=${(e: Event) => setStatus((e.currentTarget as HTMLSelectElement).value as '' | 'open' | 'ended')}>
        <option value="">all</option>
        <option value="open">live</option>
        <option value="ended">ended</option>
      </select>
    </div>
    <${ErrorBox} error=${list.error} />
    ${list.data?.data.length === 0 ? html`<p class="empty">No conversations yet. Open the demo page or your site and say hello.</p>` : null}
    <div class="table-wrap">
      <table aria-label="Conversations">
        <thead>
          <tr>
            <th scope="col">Conversation</th>
            <th scope="col">Status</th>
            <th scope="col">Handled by</th>
            <th scope="col">Messages</th>
            <th scope="col">Lead</th>
            <th scope="col">Last activity</th>
          </tr>
        </thead>
        <tbody>
          ${(list.data?.data ?? []).map(
            (c) =>
              html`<tr aria-current=${c.id === selected ? 'true' : undefined}>
                <td><a href=${`${base}/${c.id}`}>${c.id}</a></td>
                <td>
                  ${c.status === 'open' ? 'live' : `ended (${c.ended_reason ?? ''})`}${c.escalated ? html` <span class="badge">needs a person</span>` : null}
                </td>
                <td>${c.handler === 'human' ? 'a person' : 'the agent'}</td>
                <td>${c.message_count}</td>
                <td>${c.has_lead ? 'yes' : '—'}</td>
                <td>${fmtTime(c.last_activity_at)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${selected ? html`<${Transcript} widgetId=${widgetId} id=${selected} onChange=${list.reload} />` : null}
  </div>`;
}

/** What the visitor left as a lead. */
const leadDetails = (lead: NonNullable<ConversationDetail['lead']>) =>
  html`<dl class="lead" aria-label="Lead details">
    <dt>Name</dt>
    <dd>${lead.name ?? '—'}</dd>
    <dt>E-mail</dt>
    <dd>${lead.email ?? '—'}</dd>
    <dt>Phone</dt>
    <dd>${lead.phone ?? '—'}</dd>
  </dl>`;

const messageList = (messages: Message[]) =>
  html`<ol class="messages" aria-label="Transcript">
    ${messages.map(
      (m) =>
        html`<li class=${`msg ${m.role}`}>
          <strong>${roleLabel(m.role)}</strong> <span class="hint">${fmtTime(m.created_at)}</span>
          <p>${m.text}</p>
        </li>`,
    )}
  </ol>`;

/** An open conversation's hand-off (take over or hand back), close, and the operator's reply. */
function openControls(o: {
  path: string;
  handler: Conversation['handler'];
  act: (fn: () => Promise<unknown>) => Promise<void>;
  reply: (e: Event) => void;
  text: string;
  setText: (t: string) => void;
}) {
  const { path, act } = o;
  return html`<div class="row">
      ${
        o.handler === 'agent'
          ? html`<button type="button" onClick=${() => act(() => call('POST', `${path}/take-over`))}>Take over</button>`
          : html`<button type="button" class="secondary" onClick=${() => act(() => call('POST', `${path}/hand-back`))}>Hand back to the agent</button>`
      }
      <button type="button" class="secondary" onClick=${() => act(() => call('POST', `${path}/close`))}>Close conversation</button>
    </div>
    <form onSubmit=${o.reply} aria-label="Reply as a person">
      <${TextField} id="reply-text" label="Reply as a person" value=${o.text} onValue=${o.setText} maxLength=${2000} multiline=${true} />
      <button type="submit">Send reply</button>
    </form>`;
}

/** One line, so that htm keeps its spaces (it drops whitespace that holds a line break). */
function summaryOf(d: ConversationDetail): string {
  const state = d.status === 'open' ? 'live' : `ended ${fmtTime(d.ended_at)} (${d.ended_reason})`;
  return `started ${fmtTime(d.started_at)} · ${state} · ${d.handler === 'human' ? 'handled by a person' : 'handled by the agent'}`;
}

function Transcript({ widgetId, id, onChange }: { widgetId: string; id: string; onChange: () => Promise<void> }) {
  const path = `/v1/widgets/${widgetId}/conversations/${id}`;
  const c = useLoad(() => call<ConversationDetail>('GET', path), [path]);
  useInterval(() => void c.reload(), LIVE_MS);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      await Promise.all([c.reload(), onChange()]);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const reply = (e: Event) => {
    e.preventDefault();
    if (!text.trim()) return;
    void act(async () => {
      await call('POST', `${path}/reply`, { body: { text } });
      setText('');
    });
  };
  const d = c.data;
  return html`<section class="card transcript" aria-labelledby="transcript-title">
    <h3 class="h3" id="transcript-title">Conversation ${id}</h3>
    <${ErrorBox} error=${error ?? c.error} />
    ${
      d
        ? html`<p class="hint">Visitor <code>${d.visitor_id}</code> · ${summaryOf(d)}</p>
            ${d.lead ? leadDetails(d.lead) : null} ${messageList(d.messages)}
            ${d.status === 'open' ? openControls({ path, handler: d.handler, act, reply, text, setText }) : null}
            <button
              type="button"
              class="danger small"
              onClick=${() =>
                act(async () => {
                  if (!confirm('Delete this conversation, its transcript and lead details?')) return;
                  await call('DELETE', path);
                  location.hash = `#/widgets/${widgetId}/settings/conversations`;
                })}
            >
              Delete conversation
            </button>`
        : null
    }
  </section>`;
}

interface Day {
  day: string;
  conversations: number;
  leads: number;
  escalations: number;
  median_response_ms: number | null;
}

/** Conversations, leads, escalations and median response time per day: a chart and the same numbers as a table. */
export function ConversationAnalytics({ widgetId }: { widgetId: string }) {
  const [days, setDays] = useState(30);
  const data = useLoad(() => call<{ days: Day[] }>('GET', `/v1/widgets/${widgetId}/analytics?days=${days}`), [widgetId, days]);
  const rows = data.data?.days ?? [];
  const x = rows.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  return html`<div>
    <h2>Conversations</h2>
    <div class="row">
      <label for="an-days">Days</label>
      <select id="an-days" value=${String(days)} onChange=${(e: Event) => setDays(Number((e.currentTarget as HTMLSelectElement).value))}>
        <option value="7">7</option>
        <option value="30">30</option>
        <option value="90">90</option>
      </select>
    </div>
    <${ErrorBox} error=${data.error} />
    ${
      rows.length > 0
        ? html`<${Chart}
            label=${`Conversations, leads and escalations per day, and median response time (ms), last ${days} days`}
            x=${x}
            series=${[
              { label: 'Conversations', values: rows.map((d) => d.conversations), color: '#2457c5', bars: true },
              { label: 'Leads', values: rows.map((d) => d.leads), color: '#1a7f37' },
              { label: 'Escalations', values: rows.map((d) => d.escalations), color: '#b35900' },
              { label: 'Median response (ms)', values: rows.map((d) => d.median_response_ms ?? 0), color: '#6e40c9', right: true },
            ]}
          />`
        : null
    }
    <div class="table-wrap">
      <table aria-label="Conversations per day">
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Conversations</th>
            <th scope="col">Leads</th>
            <th scope="col">Escalations</th>
            <th scope="col">Median response</th>
          </tr>
        </thead>
        <tbody>
          ${[...rows].reverse().map(
            (d) =>
              html`<tr>
                <td>${d.day}</td>
                <td>${d.conversations}</td>
                <td>${d.leads}</td>
                <td>${d.escalations}</td>
                <td>${d.median_response_ms === null ? '—' : `${d.median_response_ms} ms`}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </div>`;
}
