import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call } from '../api.js';
import { Chart } from '../chart.js';
import { ErrorBox, fmtMoney, fmtPeriod, fmtPct, fmtTime, useInterval, useLoad } from '../ui.js';
import { ago, fmtMs } from './connection.js';

interface Overview {
  survivors: number;
  players: number;
  lines: number;
  spend: number;
  cache: number;
  p50: number | null;
  p99: number | null;
  latencyAt: string | null;
  lastSeenAt: string | null;
  period: { start: string; end: string; reports: number; lines: number; spendUsd: number; llmTokens: number; ttsCharacters: number; cacheHits: number };
  series: { day: string; lines: number; spendUsd: number; cacheHits: number; reports: number }[];
}

function Kpi({ label, value, note }: { label: string; value: string | number; note?: string }) {
  return html`<div class="kpi">
    <dt>${label}</dt>
    <dd>${typeof value === 'number' ? value.toLocaleString('en') : value}</dd>
    ${note ? html`<dd class="kpi-note">${note}</dd>` : null}
  </div>`;
}

/** The last known tick latency, "0.42 / 1.79 ms", with its age; a line that says why when there is none. */
function latencyKpi(d: Overview): { value: string; note: string } {
  if (d.p50 === null) return { value: '—', note: d.lastSeenAt ? 'no ticks in recent reports' : 'no report yet' };
  return { value: `${fmtMs(d.p50)} / ${d.p99 === null ? '—' : fmtMs(d.p99)}`, note: `reported ${ago(d.latencyAt)}` };
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
              <${Kpi} label="Spend today" value=${fmtMoney(d.spend)} />
              <${Kpi} label="Cache share today" value=${fmtPct(d.cache)} />
              <${Kpi} label="Tick p50 / p99" ...${latencyKpi(d)} />
              <${Kpi} label="Lines this month" value=${d.period.lines} />
              <${Kpi} label="Spend this month" value=${fmtMoney(d.period.spendUsd)} />
            </dl>
            <p class="hint">
              Last report: ${fmtTime(d.lastSeenAt)}. Today and this month are UTC days; this month is ${fmtPeriod(d.period.start, d.period.end)}.
            </p>
            <${Chart}
              label="Lines spoken and spend (USD, right axis), last 7 days (UTC)"
              x=${d.series.map((s) => daySeconds(s.day))}
              series=${[
                { label: 'Lines', values: d.series.map((s) => s.lines), color: '#2563eb' },
                { label: 'Spend', values: d.series.map((s) => s.spendUsd), color: '#c2410c', right: true, money: 'USD' },
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
                        <td>${fmtMoney(s.spendUsd)}</td>
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

/** What each activity kind the brain counts means, as a sentence fragment ("3 × spotted a hostile"). */
const ACTIVITY_TEXT: Record<string, [one: string, many: string]> = {
  spawn: ['character appeared', 'characters appeared'],
  snap: ['hostile spotted', 'hostiles spotted'],
  squad: ['squadmate took up a contact', 'squadmates took up a contact'],
  heard: ['line heard', 'lines heard'],
  plan: ['new plan', 'new plans'],
  afk: ['went AFK', 'went AFK'],
  logoff: ['logged off', 'logged off'],
  block: ['held ground for the squad', 'held ground for the squad'],
  emote: ['emote', 'emotes'],
  spoke: ['line spoken', 'lines spoken'],
};

/** "3 hostiles spotted", "1 line spoken"; a kind the dashboard does not know is shown as it came. */
export function activityText(kind: string, count: number): string {
  const text = ACTIVITY_TEXT[kind];
  if (!text) return `${kind} × ${count.toLocaleString('en')}`;
  return `${count.toLocaleString('en')} ${count === 1 ? text[0] : text[1]}`;
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
      ${(a.data ?? []).map(
        (e) =>
          html`<li key=${e.id}>
            <span class="kind" data-kind=${e.kind}>${activityText(e.kind, e.count)}</span> <time datetime=${e.ts}>${fmtTime(e.ts)}</time>
          </li>`,
      )}
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
    <h2>Economy</h2>
    <${ErrorBox} error=${e.error ?? o.error} />
    ${
      o.data
        ? html`<${Chart}
            label="Lines spoken and phrase-cache hits per day, last 7 days (UTC)"
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
                Spend by source, this month (${fmtPeriod(d.periodStart, d.periodEnd)}, UTC)
              </caption>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Volume</th>
                  <th scope="col">Spend</th>
                  <th scope="col">Share</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <th scope="row">TTS</th>
                  <td>${d.tts.characters.toLocaleString('en')} characters</td>
                  <td>${fmtMoney(d.tts.usd)}</td>
                  <td>${fmtPct(d.tts.share)}</td>
                </tr>
                <tr>
                  <th scope="row">LLM</th>
                  <td>${d.llm.tokens.toLocaleString('en')} tokens</td>
                  <td>${fmtMoney(d.llm.usd)}</td>
                  <td>${fmtPct(d.llm.share)}</td>
                </tr>
                <tr>
                  <th scope="row">Other</th>
                  <td>—</td>
                  <td>${fmtMoney(d.other.usd)}</td>
                  <td>${fmtPct(d.other.share)}</td>
                </tr>
                <tr>
                  <th scope="row">Phrase cache</th>
                  <td>${d.cache.hits.toLocaleString('en')} of ${d.cache.lines.toLocaleString('en')} lines</td>
                  <td>—</td>
                  <td>${fmtPct(d.cache.share)}</td>
                </tr>
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  <td></td>
                  <td>${fmtMoney(d.totalUsd)}</td>
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
    <h2>Usage this month</h2>
    <${ErrorBox} error=${u.error} />
    ${
      d
        ? html`<dl class="kpis">
            <${Kpi} label="Period (UTC)" value=${fmtPeriod(d.periodStart, d.periodEnd)} />
            <${Kpi} label="Lines spoken" value=${d.linesSpoken} />
            <${Kpi} label="LLM tokens" value=${d.llmTokens} />
            <${Kpi} label="TTS characters" value=${d.ttsCharacters} />
            <${Kpi} label="Spend" value=${fmtMoney(d.spendUsd)} />
          </dl>`
        : null
    }
  </div>`;
}
