import { html } from '../html.js';

/** The sidecar's link as a server summary carries it (see the control plane's ServerSummary). */
export interface SidecarConnection {
  state: 'connected' | 'stale' | 'never';
  /** `live`: a push stream is open (publishes arrive in a second); `polling`: it pulls every 15 s. */
  path: 'live' | 'polling' | null;
  lastPullAt: string | null;
  appliedVersion: number | null;
  lastReportAt: string | null;
  sidecarVersion: string | null;
  latencyMs: { p50: number; p99: number } | null;
  /** Where the sidecar's lines come from, as its reports say; null before one did. */
  dialogue: { source: 'model' | 'demo' | 'none'; model?: string } | null;
}

/** "12 s ago", "4 min ago", "3 h ago", "2 d ago"; '—' for none. */
export function ago(iso: string | null, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

const SEP = ' · ';

/** Milliseconds to three significant digits at most: "0.42 ms", "1.79 ms", "33.8 ms". */
export function fmtMs(value: number): string {
  return `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value)} ms`;
}

const STATE_TEXT: Record<SidecarConnection['state'], string> = { connected: 'connected', stale: 'not seen lately', never: 'never connected' };
const STATE_CLASS: Record<SidecarConnection['state'], string> = { connected: 'ok', stale: 'bad', never: 'muted' };

/**
 * One line per server: whether its sidecar is connected, its last pull and the version it
 * runs (against the published one), its last report, its version, and tick latency.
 */
export function ConnectionLine({ c, published }: { c: SidecarConnection; published: number }) {
  const behind = c.appliedVersion !== null && c.appliedVersion !== published;
  return html`<span class="connection" data-connection=${c.state}>
    <span class=${`badge ${STATE_CLASS[c.state]}`}>${STATE_TEXT[c.state]}</span>
    ${c.path ? html` <span class=${`badge ${c.path === 'live' ? 'ok' : 'muted'}`} data-path=${c.path} title=${c.path === 'live' ? 'publishes are pushed to the sidecar at once' : 'the sidecar pulls every 15 s; publishes arrive at its next pull'}>${c.path}</span>` : null}
    ${
      c.state === 'never'
        ? html` <span class="muted-text">no config pull or report yet</span>`
        : html` <span
              >${`pulled ${ago(c.lastPullAt)}`}${c.appliedVersion !== null ? html`, runs <span class=${behind ? 'warn' : ''}>v${c.appliedVersion}${behind ? ` (v${published} published)` : ''}</span>` : null}</span
            >${SEP}<span>report ${ago(c.lastReportAt)}</span
            >${c.latencyMs ? html`${SEP}<span>tick p50 ${fmtMs(c.latencyMs.p50)} / p99 ${fmtMs(c.latencyMs.p99)}</span>` : null}${c.sidecarVersion ? html`${SEP}<span class="muted-text">${c.sidecarVersion}</span>` : null}`
    }
  </span>`;
}
