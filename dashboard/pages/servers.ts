import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, callAllPages, messageOf } from '../api.js';
import { ErrorBox, Tabs, TextField, fmtTime, useInterval, useLoad } from '../ui.js';
import { ConnectionLine, type SidecarConnection } from './connection.js';
import { ActivityTab, EconomyTab, OverviewTab, RosterTab, UsageTab } from './server-reads.js';
import { ConfigTab } from './config.js';
import { KeysTab } from './keys.js';
import { MapTab } from './live-map.js';

export interface ServerSummary {
  id: number;
  name: string;
  createdAt: string;
  configVersion: number;
  lastSeenAt: string | null;
  botCount: number;
  playersOnline: number;
  activeKeys: number;
  connection: SidecarConnection;
}

/** How often the server pages reload the summaries, so a sidecar that starts shows as connected within seconds. */
const REFRESH_MS = 5_000;

export function ServersPage() {
  const servers = useLoad(() => callAllPages<ServerSummary>('/v1/servers'), []);
  useInterval(() => void servers.reload(), REFRESH_MS);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setFields({});
    if (!name.trim()) return setFields({ name: 'Enter a name (1–200 characters).' });
    try {
      const s = await call<ServerSummary>('POST', '/v1/servers', { body: { name } });
      setName('');
      location.hash = `#/servers/${s.id}/overview`;
    } catch (err) {
      if (err instanceof ApiError) setFields(byPath(err.details));
      setError(messageOf(err));
    }
    return undefined;
  };

  return html`<section>
    <h1>Servers</h1>
    <form class="card inline" onSubmit=${create} aria-label="Create a server">
      <${TextField} id="server-name" label="New server name" value=${name} onValue=${setName} maxLength=${200} error=${fields.name} />
      <button type="submit">Create server</button>
    </form>
    <${ErrorBox} error=${error ?? servers.error} />
    ${servers.data && servers.data.length === 0 ? html`<p class="empty">No servers yet. Create one above.</p>` : null}
    ${
      servers.data && servers.data.length > 0
        ? html`<div class="table-wrap">
            <table>
              <caption class="sr-only">
                Your game servers
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Config</th>
                  <th scope="col">Bots</th>
                  <th scope="col">Players</th>
                  <th scope="col">Keys</th>
                  <th scope="col">Sidecar</th>
                </tr>
              </thead>
              <tbody>
                ${servers.data.map(
                  (s) =>
                    html`<tr>
                      <th scope="row"><a href=${`#/servers/${s.id}/overview`}>${s.name}</a></th>
                      <td>v${s.configVersion}</td>
                      <td>${s.botCount}</td>
                      <td>${s.playersOnline}</td>
                      <td>${s.activeKeys}</td>
                      <td><${ConnectionLine} c=${s.connection} published=${s.configVersion} /></td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </section>`;
}

const TABS = [
  ['overview', 'Overview'],
  ['roster', 'Roster'],
  ['map', 'Map'],
  ['activity', 'Activity'],
  ['economy', 'Economy'],
  ['usage', 'Usage'],
  ['config', 'Configuration'],
  ['keys', 'Server keys'],
] as const;

export function ServerPage({ id, tab }: { id: string; tab: string }) {
  const server = useLoad(() => call<ServerSummary>('GET', `/v1/servers/${encodeURIComponent(id)}`), [id, tab]);
  useInterval(() => void server.reload(), REFRESH_MS);
  const body = (() => {
    switch (tab) {
      case 'roster':
        return html`<${RosterTab} id=${id} />`;
      case 'map':
        return html`<${MapTab} id=${id} />`;
      case 'activity':
        return html`<${ActivityTab} id=${id} />`;
      case 'economy':
        return html`<${EconomyTab} id=${id} />`;
      case 'usage':
        return html`<${UsageTab} id=${id} />`;
      case 'config':
        return html`<${ConfigTab} id=${id} onHead=${() => void server.reload()} />`;
      case 'keys':
        return html`<${KeysTab} id=${id} />`;
      default:
        return html`<${OverviewTab} id=${id} />`;
    }
  })();
  return html`<section>
    <p class="crumbs"><a href="#/servers">Servers</a> ›</p>
    <h1>
      ${server.data?.name ?? `Server ${id}`} ${server.data ? html`<span class="badge" data-config-version>config v${server.data.configVersion}</span>` : null}
    </h1>
    ${server.data ? html`<p class="connection-line">Sidecar: <${ConnectionLine} c=${server.data.connection} published=${server.data.configVersion} /> <span class="muted-text">(last report at ${fmtTime(server.data.lastSeenAt)})</span></p>` : null}
    <${ErrorBox} error=${server.error} />
    <${Tabs} label="Server sections" items=${TABS.map(([t, label]) => ({ href: `#/servers/${id}/${t}`, label, current: t === tab }))} />
    <div class="tab-body">${body}</div>
  </section>`;
}
