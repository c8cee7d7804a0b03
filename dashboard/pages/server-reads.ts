import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call } from '../api.js';
import { Chart } from '../chart.js';
import { ErrorBox, fmtPct, fmtTime, fmtUsd, useInterval, useLoad } from '../ui.js';
import { ago } from './connection.js';

interface Overview {
  survivors: number;
  players: number;
  lines: number;
  spend: number;
  cache: number;
  p50: number | null;
  p99: number | null;
  lastSeenAt: string | null;
  period: { start: string; end: string; reports: number; lines: number; spendUsd: number; llmTokens: number; ttsCharacters: number; cacheHits: number };
  series: { day: string; lines: number; spendUsd: number; cacheHits: number; reports: number }[];
}

function Kpi({ label, value }: { label: string; value: string | number }) {
  return html`<div class="kpi">
    <dt>${label}</dt>
    <dd>${value}</dd>
  </div>`;
}

const daySeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

export function OverviewTab({ id }: { id: string }) {
  const o = useLoad(() => call<Overview>('GET', `/v1/servers/${id}/overview`), [id]);
  useInterval(() => void o.reload(), 10_000);
  const d = o.data;
  return html`<div>
    <h2>Overview</h2>
    <${ErrorBox} error=${o.error} />
    ${
      d
        ? html`<dl class="kpis">
              <${Kpi} label="Survivors (AI)" value=${d.survivors} />
              <${Kpi} label="Players online" value=${d.players} />
              <${Kpi} label="Lines today" value=${d.lines} />
              <${Kpi} label="Spend today" value=${fmtUsd(d.spend)} />
              <${Kpi} label="Cache share today" value=${fmtPct(d.cache)} />
              <${Kpi} label="Tick p50 / p99" value=${d.p50 === null ? '—' : `${d.p50} / ${d.p99 ?? '—'} ms`} />
              <${Kpi} label="Lines this month" value=${d.period.lines} />
              <${Kpi} label="Spend this month" value=${fmtUsd(d.period.spendUsd)} />
            </dl>
            <p class="hint">Last report: ${fmtTime(d.lastSeenAt)}. Billing period ${d.period.start.slice(0, 10)} – ${d.period.end.slice(0, 10)} (UTC).</p>
            <${Chart}
              label="Lines spoken and spend (USD, right axis), last 7 days"
              x=${d.series.map((s) => daySeconds(s.day))}
              series=${[
                { label: 'Lines', values: d.series.map((s) => s.lines), color: '#2563eb' },
                { label: 'Spend USD', values: d.series.map((s) => s.spendUsd), color: '#c2410c', right: true },
              ]}
            />
            <div class="table-wrap">
              <table>
                <caption>
                  Last 7 days (UTC)
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col">Lines</th>
                    <th scope="col">Spend</th>
                    <th scope="col">Cache hits</th>
                    <th scope="col">Reports</th>
                  </tr>
                </thead>
                <tbody>
                  ${d.series.map(
                    (s) =>
                      html`<tr>
                        <th scope="row">${s.day}</th>
                        <td>${s.lines}</td>
                        <td>${fmtUsd(s.spendUsd)}</td>
                        <td>${s.cacheHits}</td>
                        <td>${s.reports}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
        : null
    }
  </div>`;
}

interface Survivor {
  agent: number;
  name: string;
  alignment: string;
  goal: string;
  state: string;
  /** When the report carrying this row arrived. */
  seenAt?: string | null;
  /** That report is too old to trust the state (the sidecar stopped reporting). */
  stale?: boolean;
}

export function RosterTab({ id }: { id: string }) {
  const r = useLoad(() => call<Survivor[]>('GET', `/v1/servers/${id}/roster`), [id]);
  return html`<div>
    <h2>Roster</h2>
    <${ErrorBox} error=${r.error} />
    ${r.data && r.data.some((s) => s.stale) ? html`<p class="notice warn" role="status">The sidecar has not reported for a while: these characters' states are not current.</p>` : null}
    ${r.data && r.data.length === 0 ? html`<p class="empty">No roster yet: it appears with the sidecar's first report that carries one.</p>` : null}
    ${
      r.data && r.data.length > 0
        ? html`<div class="table-wrap">
            <table>
              <caption class="sr-only">
                AI roster
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Alignment</th>
                  <th scope="col">Goal</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                ${r.data.map(
                  (s) =>
                    html`<tr class=${s.stale ? 'stale' : ''}>
                      <th scope="row">${s.name}</th>
                      <td>${s.alignment}</td>
                      <td>${s.goal}</td>
                      <td>
                        ${s.stale ? html`<span class="muted-text" title=${`last reported ${s.state}`}>unknown: last reported ${ago(s.seenAt ?? null)}</span>` : s.state}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </div>`;
}

interface ActivityEvent {
  id: number;
  kind: string;
  count: number;
  ts: string;
}

export function ActivityTab({ id }: { id: string }) {
  const [limit, setLimit] = useState(20);
  const [auto, setAuto] = useState(true);
  const a = useLoad(() => call<ActivityEvent[]>('GET', `/v1/servers/${id}/activity?limit=${limit}`), [id, limit]);
  useInterval(() => void a.reload(), auto ? 3000 : null);
  return html`<div>
    <h2>Activity</h2>
    <div class="row controls">
      <label for="activity-limit">Show</label>
      <select id="activity-limit" value=${String(limit)} onChange=${(e: Event) => setLimit(Number((e.currentTarget as HTMLSelectElement).value))}>
        ${[10, 20, 50, 100].map((n) => html`<option value=${String(n)}>${n} events</option>`)}
      </select>
      <input id="activity-auto" type="checkbox" checked=${auto} onChange=${(e: Event) => setAuto((e.currentTarget as HTMLInputElement).checked)} />
      <label for="activity-auto">Refresh every 3 s</label>
    </div>
    <${ErrorBox} error=${a.error} />
    ${a.data && a.data.length === 0 ? html`<p class="empty">No activity reported yet.</p>` : null}
    <ol class="feed" aria-live="polite">
      ${(a.data ?? []).map((e) => html`<li key=${e.id}><span class="kind">${e.kind}</span> × ${e.count} <time datetime=${e.ts}>${fmtTime(e.ts)}</time></li>`)}
    </ol>
  </div>`;
}

interface Economy {
  periodStart: string;
  periodEnd: string;
  totalUsd: number;
  tts: { characters: number; usd: number; share: number };
  llm: { tokens: number; usd: number; share: number };
  other: { usd: number; share: number };
  cache: { hits: number; lines: number; share: number };
}

export function EconomyTab({ id }: { id: string }) {
  const e = useLoad(() => call<Economy>('GET', `/v1/servers/${id}/economy`), [id]);
  const o = useLoad(() => call<Overview>('GET', `/v1/servers/${id}/overview`), [id]);
  const d = e.data;
  return html`<div>
    <h2>Economy (this month, UTC)</h2>
    <${ErrorBox} error=${e.error ?? o.error} />
    ${
      o.data
        ? html`<${Chart}
            label="Cache hits and lines spoken per day, last 7 days"
            x=${o.data.series.map((s) => daySeconds(s.day))}
            series=${[
              { label: 'Lines', values: o.data.series.map((s) => s.lines), color: '#2563eb', bars: true },
              { label: 'Cache hits', values: o.data.series.map((s) => s.cacheHits), color: '#15803d', bars: true },
            ]}
          />`
        : null
    }
    ${
      d
        ? html`<div class="table-wrap">
            <table>
              <caption>
                Spend by source, ${d.periodStart.slice(0, 10)} – ${d.periodEnd.slice(0, 10)}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Volume</th>
                  <th scope="col">USD</th>
                  <th scope="col">Share</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <th scope="row">TTS</th>
                  <td>${d.tts.characters} characters</td>
                  <td>${fmtUsd(d.tts.usd)}</td>
                  <td>${fmtPct(d.tts.share)}</td>
                </tr>
                <tr>
                  <th scope="row">LLM</th>
                  <td>${d.llm.tokens} tokens</td>
                  <td>${fmtUsd(d.llm.usd)}</td>
                  <td>${fmtPct(d.llm.share)}</td>
                </tr>
                <tr>
                  <th scope="row">Other</th>
                  <td>—</td>
                  <td>${fmtUsd(d.other.usd)}</td>
                  <td>${fmtPct(d.other.share)}</td>
                </tr>
                <tr>
                  <th scope="row">Phrase cache</th>
                  <td>${d.cache.hits} of ${d.cache.lines} lines</td>
                  <td>—</td>
                  <td>${fmtPct(d.cache.share)}</td>
                </tr>
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  <td></td>
                  <td>${fmtUsd(d.totalUsd)}</td>
                  <td></td>
                </tr>
              </tfoot>
            </table>
          </div>`
        : null
    }
  </div>`;
}

interface Usage {
  periodStart: string;
  periodEnd: string;
  linesSpoken: number;
  llmTokens: number;
  ttsCharacters: number;
  spendUsd: number;
}

export function UsageTab({ id }: { id: string }) {
  const u = useLoad(() => call<Usage>('GET', `/v1/servers/${id}/usage`), [id]);
  const d = u.data;
  return html`<div>
    <h2>Usage (current period)</h2>
    <${ErrorBox} error=${u.error} />
    ${
      d
        ? html`<dl class="kpis">
            <${Kpi} label="Period" value=${`${d.periodStart.slice(0, 10)} – ${d.periodEnd.slice(0, 10)}`} />
            <${Kpi} label="Lines spoken" value=${d.linesSpoken} />
            <${Kpi} label="LLM tokens" value=${d.llmTokens} />
            <${Kpi} label="TTS characters" value=${d.ttsCharacters} />
            <${Kpi} label="Spend" value=${fmtUsd(d.spendUsd)} />
          </dl>`
        : null
    }
  </div>`;
}
