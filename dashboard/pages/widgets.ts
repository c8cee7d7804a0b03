import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, callAllPages, messageOf } from '../api.js';
import { Checkbox, ErrorBox, Notice, NumberField, ShownOnce, Tabs, TextField, fmtTime, useInterval, useLoad } from '../ui.js';
import { ConversationAnalytics, ConversationsPage, WidgetAppearance } from './conversations.js';
import { DeliveryDetail, DisabledBanner, OperationalEndpoint, ReplayFailed } from './webhook-tools.js';
import { EVENTS, RATE_LIMIT_MAX, SECRET_MAX, SIGNATURE_SCHEMES as SCHEMES, TEST_EVENT_DATA, URL_MAX, type EventType } from '../server-mirror.js';

interface Widget {
  id: string;
  name: string;
  created_at: string;
}

type Scheme = (typeof SCHEMES)[number][0];

export function WidgetsPage() {
  const widgets = useLoad(() => callAllPages<Widget>('/v1/widgets'), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setFields({});
    if (!name.trim()) return setFields({ name: 'Enter a name (1–200 characters).' });
    try {
      const w = await call<{ id: string; key: string }>('POST', '/v1/widgets', { body: { name } });
      setCreated(w);
      setName('');
      await widgets.reload();
    } catch (err) {
      if (err instanceof ApiError) setFields(byPath(err.details));
      setError(messageOf(err));
    }
    return undefined;
  };

  return html`<section>
    <h1>Widgets</h1>
    <${DisabledBanner} />
    <form class="card inline" onSubmit=${create} aria-label="Create a widget">
      <${TextField} id="widget-name" label="New widget name" value=${name} onValue=${setName} maxLength=${200} error=${fields.name} />
      <button type="submit">Create widget</button>
    </form>
    ${created ? html`<${ShownOnce} label="Widget key" value=${created.key} />` : null}
    <${ErrorBox} error=${error ?? widgets.error} />
    ${widgets.data?.length === 0 ? html`<p class="empty">No widgets yet.</p>` : null}
    <ul class="cards">
      ${(widgets.data ?? []).map(
        (w) =>
          html`<li class="card">
            <h2 class="h3">${w.name}</h2>
            <p class="hint"><code>${w.id}</code> · created ${fmtTime(w.created_at)}</p>
            <p><a href=${`#/widgets/${w.id}/settings`}>Settings</a> · <a href=${`#/widgets/${w.id}/settings/analytics/webhooks`}>Webhooks</a></p>
          </li>`,
      )}
    </ul>
  </section>`;
}

export function WidgetSettingsPage({ id, path }: { id: string; path: string[] }) {
  const widget = useLoad(() => call<Widget>('GET', `/v1/widgets/${encodeURIComponent(id)}`), [id]);
  const area = path[1] === 'analytics' ? 'analytics' : path[1] === 'conversations' ? 'conversations' : 'general';
  const analytics = path[2] === 'conversations' ? 'conversations' : 'webhooks';
  const base = `#/widgets/${id}/settings`;
  const trail =
    area === 'analytics' ? ` › Analytics › ${analytics === 'webhooks' ? 'Webhooks' : 'Conversations'}` : area === 'conversations' ? ' › Conversations' : '';
  return html`<section>
    <p class="crumbs"><a href="#/widgets">Widgets</a> › ${widget.data?.name ?? id} › Settings${trail}</p>
    <h1>${widget.data?.name ?? 'Widget'} settings</h1>
    <${ErrorBox} error=${widget.error} />
    <${Tabs}
      label="Widget settings"
      items=${[
        { href: base, label: 'General', current: area === 'general' },
        { href: `${base}/conversations`, label: 'Conversations', current: area === 'conversations' },
        { href: `${base}/analytics/webhooks`, label: 'Analytics', current: area === 'analytics' },
      ]}
    />
    ${
      area === 'analytics'
        ? html`<div class="tab-body">
            <${Tabs}
              label="Analytics"
              items=${[
                { href: `${base}/analytics/webhooks`, label: 'Webhooks', current: analytics === 'webhooks' },
                { href: `${base}/analytics/conversations`, label: 'Conversations', current: analytics === 'conversations' },
              ]}
            />
            ${analytics === 'webhooks' ? html`<${WebhooksPage} widgetId=${id} />` : html`<${ConversationAnalytics} widgetId=${id} />`}
          </div>`
        : area === 'conversations'
          ? html`<div class="tab-body"><${ConversationsPage} widgetId=${id} selected=${path[2]} /></div>`
          : html`<div class="tab-body"><${WidgetAppearance} widgetId=${id} /><${WidgetKeys} widgetId=${id} /></div>`
    }
  </section>`;
}

interface WidgetKey {
  id: string;
  preview: string;
  created_at: string;
  revoked_at: string | null;
}

function WidgetKeys({ widgetId }: { widgetId: string }) {
  const keys = useLoad(() => callAllPages<WidgetKey>(`/v1/widgets/${widgetId}/keys`), [widgetId]);
  const [fresh, setFresh] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const act = async (fn: () => Promise<void>) => {
    setError(null);
    try {
      await fn();
      await keys.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return html`<div>
    <h2>Widget keys</h2>
    <p class="hint">A widget key (<code>bwk_…</code>) lets the widget's backend post events for this widget only.</p>
    <button type="button" onClick=${() => act(async () => setFresh((await call<{ key: string }>('POST', `/v1/widgets/${widgetId}/keys`)).key))}>
      Issue a widget key
    </button>
    ${fresh ? html`<${ShownOnce} label="New widget key" value=${fresh} />` : null}
    <${ErrorBox} error=${error ?? keys.error} />
    <ul class="plain">
      ${(keys.data ?? []).map(
        (k) =>
          html`<li>
            <code>${k.preview}…</code> ${fmtTime(k.created_at)}
            ${
              k.revoked_at
                ? html`<span class="badge muted">revoked</span>`
                : html`<button
                    type="button"
                    class="danger small"
                    aria-label=${`Revoke widget key ${k.preview}`}
                    onClick=${() => act(() => call('DELETE', `/v1/widgets/${widgetId}/keys/${k.id}`))}
                  >
                    Revoke
                  </button>`
            }
          </li>`,
      )}
    </ul>
  </div>`;
}

interface Endpoint {
  id: string;
  url: string;
  events: EventType[];
  signature_scheme: Scheme;
  rate_limit: number | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
}

export function WebhooksPage({ widgetId }: { widgetId: string }) {
  const endpoints = useLoad(() => callAllPages<Endpoint>(`/v1/widgets/${widgetId}/webhooks`), [widgetId]);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const act = async (fn: () => Promise<void>) => {
    setError(null);
    setNote(null);
    try {
      await fn();
      await endpoints.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return html`<div class="webhooks">
    <h2>Webhooks</h2>
    <p class="hint">
      Signed HTTP POSTs to your endpoints when conversations start or end, an escalation triggers or a lead is captured.
      <a href="#/webhook-event-types">Event types and their schemas</a>.
    </p>
    <${DisabledBanner} widgetId=${widgetId} />
    ${secret ? html`<${ShownOnce} label=${secret.label} value=${secret.value} />` : null} ${note ? html`<${Notice}>${note}<//>` : null}
    <${ErrorBox} error=${error ?? endpoints.error} />
    ${
      endpoints.data && endpoints.data.length === 0
        ? html`<p class="empty" data-empty-endpoints>No webhook endpoints yet. Add one below to start receiving events.</p>`
        : null
    }
    <ul class="endpoints">
      ${(endpoints.data ?? []).map(
        (ep) =>
          html`<${EndpointItem}
            key=${ep.id}
            widgetId=${widgetId}
            ep=${ep}
            onEdited=${() => endpoints.reload()}
            onToggle=${() =>
              act(async () => {
                await call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { body: { enabled: !ep.enabled } });
              })}
            onRotate=${() =>
              act(async () => {
                if (!confirm('Rotate the signing secret? The old one keeps verifying (Standard Webhooks header) for 24 hours.')) return;
                const r = await call<{ secret: string }>('POST', `/v1/widgets/${widgetId}/webhooks/${ep.id}/rotate-secret`);
                setSecret({ label: `New signing secret for ${ep.url}`, value: r.secret });
              })}
            onDelete=${() =>
              act(async () => {
                if (!confirm(`Delete the endpoint ${ep.url} and its delivery log?`)) return;
                await call('DELETE', `/v1/widgets/${widgetId}/webhooks/${ep.id}`);
              })}
          />`,
      )}
    </ul>
    <${EndpointForm}
      idPrefix="ep"
      title="Add an endpoint"
      edit=${false}
      submitLabel="Add endpoint"
      onSave=${async (body: Record<string, unknown>) => {
        const ep = await call<Endpoint & { secret: string }>('POST', `/v1/widgets/${widgetId}/webhooks`, { body });
        setSecret({ label: `Signing secret for ${ep.url}`, value: ep.secret });
        await endpoints.reload();
      }}
    />
    ${endpoints.data && endpoints.data.length > 0 ? html`<${OperationalEndpoint} endpoints=${endpoints.data} />` : null}
    ${endpoints.data && endpoints.data.length > 0 ? html`<${TestEvent} widgetId=${widgetId} onSent=${(n: number) => setNote(`Test event accepted: ${n} deliver${n === 1 ? 'y' : 'ies'} queued.`)} onError=${setError} />` : null}
  </div>`;
}

/** What the form refuses before asking the server: no URL, too long a URL or secret, no event, a rate out of range. */
function endpointProblems(url: string, secret: string, events: EventType[], rate: number): Record<string, string> {
  const local: Record<string, string> = {};
  if (!url.trim()) local.url = 'Enter the endpoint URL.';
  else if (url.length > URL_MAX) local.url = `At most ${URL_MAX} characters (now ${url.length}).`;
  if (secret.length > SECRET_MAX) local.secret = `At most ${SECRET_MAX} characters (now ${secret.length}).`;
  if (events.length === 0) local.events = 'Choose at least one event.';
  if (!Number.isNaN(rate) && (!Number.isInteger(rate) || rate < 1 || rate > RATE_LIMIT_MAX))
    local.rate_limit = `A whole number from 1 to ${RATE_LIMIT_MAX}, or empty for no limit.`;
  return local;
}

/** A 422's details by field; events[1] and the like belong to the events group. */
function fieldsOfRefusal(err: ApiError): Record<string, string> {
  const by = byPath(err.details);
  for (const [k, v] of Object.entries(by)) if (k.startsWith('events[')) by.events = by.events ? `${by.events}; ${v}` : v;
  return by;
}

/** A checkbox per event type, kept in the catalogue's order. */
function EventChecks({
  idPrefix,
  events,
  onEvents,
  error,
}: {
  idPrefix: string;
  events: EventType[];
  onEvents: (e: EventType[]) => void;
  error: string | undefined;
}) {
  const toggle = (ev: EventType, on: boolean) => onEvents(on ? EVENTS.filter((x) => x === ev || events.includes(x)) : events.filter((x) => x !== ev));
  return html`<fieldset class=${error ? 'invalid' : ''} aria-describedby=${error ? `${idPrefix}-events-error` : undefined}>
    <legend>Events</legend>
    ${EVENTS.map(
      (ev) =>
        html`<${Checkbox}
          id=${`${idPrefix}-ev-${ev.replace('.', '-')}`}
          label=${ev}
          checked=${events.includes(ev)}
          onValue=${(v: boolean) => toggle(ev, v)}
        />`,
    )}
    ${error ? html`<p class="field-error" id=${`${idPrefix}-events-error`} data-error-for=${`${idPrefix}-events`}>${error}</p>` : null}
  </fieldset>`;
}

/**
 * The endpoint form: adding one (URL, optional secret, events, enabled) or editing one (URL
 * and events; the secret changes by rotation and enabled by its own button). The server's
 * `422` details land at the matching field, `events[i]` at the events group.
 */
const schemeSelect = (idPrefix: string, scheme: Scheme, onScheme: (s: Scheme) => void) =>
  html`<div class="field">
    <label for=${`${idPrefix}-scheme`}>Signature</label>
    <select id=${`${idPrefix}-scheme`} value=${scheme} onChange=${(e: Event) => onScheme((e.currentTarget as HTMLSelectElement).value as Scheme)}>
      ${SCHEMES.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
    </select>
  </div>`;

interface EndpointFormProps {
  idPrefix: string;
  title: string;
  initial?: { url: string; events: EventType[]; signature_scheme: Scheme; rate_limit: number | null };
  edit: boolean;
  submitLabel: string;
  onSave: (body: Record<string, unknown>) => Promise<void>;
  onCancel?: () => void;
}

function EndpointForm({ idPrefix, title, initial, edit, submitLabel, onSave, onCancel }: EndpointFormProps) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [secret, setSecret] = useState('');
  const [events, setEvents] = useState<EventType[]>(initial ? [...initial.events] : [...EVENTS]);
  const [enabled, setEnabled] = useState(true);
  const [scheme, setScheme] = useState<Scheme>(initial?.signature_scheme ?? 'hmac');
  const [rate, setRate] = useState<number>(initial?.rate_limit ?? NaN);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const local = endpointProblems(url, secret, events, rate);
    setFields(local);
    if (Object.keys(local).length) return;
    try {
      const body: Record<string, unknown> = { url: url.trim(), events, signature_scheme: scheme, rate_limit: Number.isNaN(rate) ? null : rate };
      if (!edit) body.enabled = enabled;
      if (!edit && secret) body.secret = secret;
      await onSave(body);
      if (!edit) {
        setUrl('');
        setSecret('');
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) setFields(fieldsOfRefusal(err));
      setError(messageOf(err));
    }
  };

  return html`<form class="card" onSubmit=${submit} novalidate aria-labelledby=${`${idPrefix}-title`}>
    <h3 id=${`${idPrefix}-title`}>${title}</h3>
    <${ErrorBox} error=${error} />
    <${TextField}
      id=${`${idPrefix}-url`}
      label="Endpoint URL"
      type="url"
      value=${url}
      onValue=${setUrl}
      maxLength=${URL_MAX}
      error=${fields.url}
      hint=${`https:// and publicly reachable; at most ${URL_MAX} characters.`}
    />
    ${
      edit
        ? null
        : html`<${TextField}
            id=${`${idPrefix}-secret`}
            label="Signing secret (optional)"
            value=${secret}
            onValue=${setSecret}
            maxLength=${SECRET_MAX}
            error=${fields.secret}
            hint="Leave empty to have one generated (whsec_…)."
          />`
    }
    <${EventChecks} idPrefix=${idPrefix} events=${events} onEvents=${setEvents} error=${fields.events} />
    ${schemeSelect(idPrefix, scheme, setScheme)}
    <${NumberField}
      id=${`${idPrefix}-rate`}
      label="Rate limit (deliveries per second, optional)"
      value=${rate}
      onValue=${setRate}
      min=${1}
      max=${RATE_LIMIT_MAX}
      error=${fields.rate_limit}
      hint="Empty: no limit."
    />
    ${edit ? null : html`<${Checkbox} id=${`${idPrefix}-enabled`} label="Enabled" checked=${enabled} onValue=${setEnabled} error=${fields.enabled} />`}
    <div class="row">
      <button type="submit">${submitLabel}</button>
      ${onCancel ? html`<button type="button" class="secondary" onClick=${onCancel}>Cancel</button>` : null}
    </div>
  </form>`;
}

interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
}

/** The endpoint's latest deliveries, each with its details (opened one at a time) and a retry. */
function DeliveryTable(props: {
  rows: Delivery[];
  base: string;
  enabled: boolean;
  open: string | null;
  onDetails: (d: Delivery) => void;
  onRetry: (d: Delivery) => Promise<void>;
}) {
  const { base, open } = props;
  return html`<div class="table-wrap">
    <table class="deliveries">
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last result</th>
          <th scope="col">Created</th>
          <th scope="col"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${props.rows.map(
          (d) =>
            html`<tr data-delivery=${d.id}>
                <th scope="row">${d.event}</th>
                <td><span class=${`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'muted'}`}>${d.status}</span></td>
                <td>${d.attempts}</td>
                <td>${d.last_status_code ?? ''} ${d.last_error ?? ''}</td>
                <td>${fmtTime(d.created_at)}</td>
                <td class="actions">
                  <button type="button" class="secondary small" aria-expanded=${open === d.id} onClick=${() => props.onDetails(d)}>Details</button>
                  <button
                    type="button"
                    class="secondary small"
                    disabled=${d.status === 'inflight' || !props.enabled}
                    onClick=${() => props.onRetry(d)}
                    aria-label=${`Retry delivery ${d.id}`}
                  >
                    Retry
                  </button>
                </td>
              </tr>
              ${
                open === d.id
                  ? html`<tr>
                      <td colspan="6"><${DeliveryDetail} base=${base} id=${d.id} /></td>
                    </tr>`
                  : null
              }`,
        )}
      </tbody>
    </table>
  </div>`;
}

function EndpointItem({
  widgetId,
  ep,
  onEdited,
  onToggle,
  onRotate,
  onDelete,
}: {
  widgetId: string;
  ep: Endpoint;
  onEdited: () => Promise<void>;
  onToggle: () => void;
  onRotate: () => void;
  onDelete: () => void;
}) {
  const base = `/v1/widgets/${widgetId}/webhooks/${ep.id}`;
  const deliveries = useLoad(() => call<{ data: Delivery[] }>('GET', `${base}/deliveries?limit=20`), [base]);
  useInterval(() => void deliveries.reload(), 3000);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);

  const retry = async (d: Delivery) => {
    setError(null);
    try {
      await call('POST', `${base}/deliveries/${d.id}/retry`);
      await deliveries.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const attempts = (d: Delivery) => setOpen(open === d.id ? null : d.id);

  return html`<li class="card endpoint" data-endpoint=${ep.id}>
    <div class="row spread">
      <h3 class="h4 url">${ep.url}</h3>
      <span class=${`badge ${ep.enabled ? 'ok' : 'muted'}`}>${ep.enabled ? 'enabled' : `disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ''}`}</span>
    </div>
    <p class="hint">
      ${ep.events.join(', ')} · signed
      ${ep.signature_scheme}${ep.rate_limit ? ` · at most ${ep.rate_limit}/s` : ''}${ep.failing_since ? html` · <span class="warn">failing since ${fmtTime(ep.failing_since)}</span>` : null}
    </p>
    <div class="row">
      <button type="button" class="secondary" aria-expanded=${editing} onClick=${() => setEditing(!editing)}>Edit</button>
      <button type="button" class="secondary" onClick=${onToggle}>${ep.enabled ? 'Disable' : 'Enable'}</button>
      <button type="button" class="secondary" onClick=${onRotate}>Rotate secret</button>
      <button type="button" class="danger" onClick=${onDelete}>Delete</button>
    </div>
    ${
      editing
        ? html`<${EndpointForm}
            idPrefix=${`edit-${ep.id}`}
            title=${`Edit ${ep.url}`}
            initial=${ep}
            edit=${true}
            submitLabel="Save endpoint"
            onSave=${async (body: Record<string, unknown>) => {
              await call('PATCH', base, { body });
              setEditing(false);
              await onEdited();
            }}
            onCancel=${() => setEditing(false)}
          />`
        : null
    }
    <${ErrorBox} error=${error ?? deliveries.error} />
    <h4>Delivery log</h4>
    <${ReplayFailed} base=${base} enabled=${ep.enabled} onDone=${() => void deliveries.reload()} />
    ${deliveries.data?.data.length === 0 ? html`<p class="empty">No deliveries yet.</p>` : null}
    ${
      deliveries.data && deliveries.data.data.length > 0
        ? html`<${DeliveryTable} rows=${deliveries.data.data} base=${base} enabled=${ep.enabled} open=${open} onDetails=${attempts} onRetry=${retry} />`
        : null
    }
  </li>`;
}

function TestEvent({ widgetId, onSent, onError }: { widgetId: string; onSent: (n: number) => void; onError: (m: string) => void }) {
  const [event, setEvent] = useState<EventType>('conversation.started');
  const send = async (e: Event) => {
    e.preventDefault();
    const data = TEST_EVENT_DATA[event](`ses_test${Date.now().toString(36)}`);
    try {
      const r = await call<{ deliveries: number }>('POST', `/v1/widgets/${widgetId}/events`, { body: { event, data } });
      onSent(r.deliveries);
    } catch (err) {
      onError(messageOf(err));
    }
  };
  return html`<form class="card inline" onSubmit=${send} aria-label="Send a test event">
    <div class="field">
      <label for="test-event">Test event</label>
      <select id="test-event" value=${event} onChange=${(e: Event) => setEvent((e.currentTarget as HTMLSelectElement).value as EventType)}>
        ${EVENTS.map((x) => html`<option value=${x}>${x}</option>`)}
      </select>
    </div>
    <button type="submit">Send test event</button>
  </form>`;
}
