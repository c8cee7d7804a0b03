import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, messageOf } from '../api.js';
import { ErrorBox, Notice, fmtTime, useLoad } from '../ui.js';

/**
 * The webhook pages' tools beside the endpoint list: the breaker's banner, the operational
 * endpoint, a delivery's payload and the receiver's answers, replay of failed deliveries since
 * a time, and the event catalogue.
 */

interface DisabledEndpoint {
  endpoint_id: string;
  widget_id: string;
  url: string;
  reason: 'failing' | 'gone';
  disabled_at: string | null;
}

const WHY = { failing: 'every attempt failed for 24 hours', gone: 'the receiver answered 410 Gone' } as const;

/** A banner for every endpoint the breaker disabled (of one widget, or of the whole tenant). */
export function DisabledBanner({ widgetId }: { widgetId?: string }) {
  const list = useLoad(() => call<DisabledEndpoint[]>('GET', '/v1/webhooks/disabled-endpoints'), [widgetId]);
  const rows = (list.data ?? []).filter((d) => !widgetId || d.widget_id === widgetId);
  if (rows.length === 0) return null;
  return html`<div class="banner warn" role="alert" data-disabled-banner>
    <strong>${rows.length === 1 ? 'A webhook endpoint was disabled' : `${rows.length} webhook endpoints were disabled`}</strong>
    <ul class="plain">
      ${rows.map(
        (d) =>
          html`<li data-disabled-endpoint=${d.endpoint_id}>
            <span class="url">${d.url}</span>: ${WHY[d.reason]} (disabled ${fmtTime(d.disabled_at)}).
            <a href=${`#/widgets/${d.widget_id}/settings/analytics/webhooks`}>Fix and re-enable it</a>, then replay what failed.
          </li>`,
      )}
    </ul>
  </div>`;
}

interface Operational {
  endpoint_id: string | null;
  url: string | null;
}

/** Chooses which endpoint receives the tenant's operational events (endpoint.disabled). */
export function OperationalEndpoint({ endpoints }: { endpoints: { id: string; url: string }[] }) {
  const current = useLoad(() => call<Operational>('GET', '/v1/webhooks/operational-endpoint'), []);
  const [error, setError] = useState<string | null>(null);
  const choose = async (id: string) => {
    setError(null);
    try {
      await call('PUT', '/v1/webhooks/operational-endpoint', { body: { endpoint_id: id === '' ? null : id } });
      await current.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const selected = current.data?.endpoint_id ?? '';
  const elsewhere = selected !== '' && !endpoints.some((e) => e.id === selected);
  return html`<div class="card inline">
    <div class="field">
      <label for="ops-endpoint">Operational endpoint</label>
      <select
        id="ops-endpoint"
        value=${selected}
        onChange=${(e: Event) => choose((e.currentTarget as HTMLSelectElement).value)}
        aria-describedby="ops-endpoint-hint"
      >
        <option value="">None</option>
        ${elsewhere ? html`<option value=${selected}>${current.data?.url} (another widget)</option>` : null}
        ${endpoints.map((e) => html`<option value=${e.id}>${e.url}</option>`)}
      </select>
      <p class="hint" id="ops-endpoint-hint">
        Receives <code>endpoint.disabled</code> when the breaker disables any of your endpoints, whatever it subscribes to.
      </p>
    </div>
    <${ErrorBox} error=${error ?? current.error} />
  </div>`;
}

interface Attempt {
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
  outcome: string;
}

interface DeliveryDetailData {
  payload: string;
  order_note: string | null;
  attempt_log: Attempt[];
}

function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** One delivery: the exact request body it sends, then each attempt with the receiver's status and the first 4 KB of its answer. */
export function DeliveryDetail({ base, id }: { base: string; id: string }) {
  const d = useLoad(() => call<DeliveryDetailData>('GET', `${base}/deliveries/${id}`), [base, id]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<p class="hint">Loading…</p>`;
  return html`<div class="delivery-detail" data-delivery-detail=${id}>
    ${d.data.order_note ? html`<p class="warn">${d.data.order_note}</p>` : null}
    <h5>Request body</h5>
    <pre class="payload" data-payload>${pretty(d.data.payload)}</pre>
    <h5>Attempts</h5>
    <ol class="attempts">
      ${d.data.attempt_log.map(
        (a) =>
          html`<li>
            ${fmtTime(a.started_at)} · ${a.outcome} · ${a.status_code ?? '—'} · ${a.duration_ms} ms${a.error ? ` · ${a.error}` : ''}
            ${a.response_excerpt ? html`<pre class="response" data-response>${a.response_excerpt}</pre>` : null}
          </li>`,
      )}
    </ol>
  </div>`;
}

/** Replays every failed delivery of an endpoint since a time: the count first, then one click. */
export function ReplayFailed({ base, enabled, onDone }: { base: string; enabled: boolean; onDone: () => void }) {
  const [since, setSince] = useState('');
  const [count, setCount] = useState<{ since: string; failed: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const at = () => (since ? new Date(since).toISOString() : '');
  const check = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setDone(null);
    if (!since) return setError('Choose a date and time.');
    try {
      setCount(await call<{ since: string; failed: number }>('GET', `${base}/recover?since=${encodeURIComponent(at())}`));
    } catch (err) {
      setError(messageOf(err));
    }
    return undefined;
  };
  const replay = async () => {
    if (!count) return;
    setError(null);
    try {
      const r = await call<{ requeued: number }>('POST', `${base}/recover`, { body: { since: count.since } });
      setDone(`${r.requeued} deliver${r.requeued === 1 ? 'y' : 'ies'} queued again.`);
      setCount(null);
      onDone();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const idFor = base.replace(/[^a-z0-9]+/gi, '-');
  return html`<form class="inline replay" onSubmit=${check} aria-label="Replay failed deliveries">
    <div class="field">
      <label for=${`${idFor}-since`}>Replay failed deliveries since</label>
      <input id=${`${idFor}-since`} type="datetime-local" value=${since} onInput=${(e: Event) => setSince((e.currentTarget as HTMLInputElement).value)} />
    </div>
    <button type="submit" class="secondary">Count failed</button>
    ${
      count
        ? html`<span data-replay-count=${count.failed}>${count.failed} failed since ${fmtTime(count.since)}</span>
            <button type="button" disabled=${count.failed === 0 || !enabled} onClick=${replay}>Replay ${count.failed}</button>
            ${enabled ? null : html`<span class="hint">Enable the endpoint first.</span>`}`
        : null
    }
    ${done ? html`<${Notice}>${done}<//>` : null}
    <${ErrorBox} error=${error} />
  </form>`;
}

interface EventTypeEntry {
  type: string;
  operational: boolean;
  description: string;
  schema: unknown;
}

/** The event catalogue: each event type, what fires it, and its body's JSON Schema. */
export function EventCataloguePage() {
  const catalogue = useLoad(() => call<{ data: EventTypeEntry[] }>('GET', '/v1/webhooks/event-types', { auth: 'none' }), []);
  return html`<section>
    <p class="crumbs"><a href="#/widgets">Widgets</a> › Webhook event types</p>
    <h1>Webhook event types</h1>
    <p class="hint">Every delivery body, as a JSON Schema (draft 2020-12). The same catalogue is served at <code>GET /v1/webhooks/event-types</code>.</p>
    <${ErrorBox} error=${catalogue.error} />
    <ul class="cards">
      ${(catalogue.data?.data ?? []).map(
        (e) =>
          html`<li class="card" data-event-type=${e.type}>
            <h2 class="h3"><code>${e.type}</code>${e.operational ? html` <span class="badge muted">operational</span>` : null}</h2>
            <p>${e.description}</p>
            <details>
              <summary>JSON Schema</summary>
              <pre class="payload">${JSON.stringify(e.schema, null, 2)}</pre>
            </details>
          </li>`,
      )}
    </ul>
  </section>`;
}
