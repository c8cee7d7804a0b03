import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, callAllPages, getAdminToken, messageOf, setAdminToken } from '../api.js';
import { ErrorBox, TextField, fmtTime, fmtMoney, useLoad } from '../ui.js';
import type { ServerSummary } from './servers.js';

interface Tenant {
  id: number;
  name: string;
  plan: string;
  status: 'active' | 'suspended';
  serverCount: number;
  monthlySpendUsd: number;
  createdAt: string;
}

/** The admin token gate: the token is kept in sessionStorage for this tab only. */
function TokenGate({ onToken }: { onToken: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setAdminToken(token.trim());
    try {
      await call('GET', '/v1/admin/tenants', { auth: 'admin' });
      onToken();
    } catch (err) {
      setAdminToken(null);
      setError(messageOf(err));
    }
  };
  return html`<form class="card narrow" onSubmit=${submit} aria-labelledby="admin-title">
    <h1 id="admin-title">Admin</h1>
    <p class="hint">Enter the admin token (<code>SERVICE_ADMIN_TOKEN</code>). It is kept in this tab only.</p>
    <${ErrorBox} error=${error} />
    <${TextField} id="admin-token" label="Admin token" type="password" autocomplete="off" value=${token} onValue=${setToken} />
    <button type="submit">Open the admin console</button>
  </form>`;
}

function useAdminGate(): [boolean, () => void] {
  const [has, setHas] = useState(Boolean(getAdminToken()));
  return [has, () => setHas(Boolean(getAdminToken()))];
}

export function AdminPage() {
  const [has, refresh] = useAdminGate();
  if (!has) return html`<${TokenGate} onToken=${refresh} />`;
  return html`<${TenantList}
    onForget=${() => {
      setAdminToken(null);
      refresh();
    }}
  />`;
}

function TenantList({ onForget }: { onForget: () => void }) {
  const tenants = useLoad(() => callAllPages<Tenant>('/v1/admin/tenants', { auth: 'admin' }), []);
  return html`<section>
    <div class="row spread">
      <h1>Tenants</h1>
      <button type="button" class="secondary" onClick=${onForget}>Forget admin token</button>
    </div>
    <${ErrorBox} error=${tenants.error} />
    ${tenants.data?.length === 0 ? html`<p class="empty">No tenants.</p>` : null}
    ${
      tenants.data && tenants.data.length > 0
        ? html`<div class="table-wrap">
            <table>
              <caption class="sr-only">
                Tenants
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Status</th>
                  <th scope="col">Servers</th>
                  <th scope="col">Spend this month</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${tenants.data.map(
                  (t) =>
                    html`<tr>
                      <th scope="row"><a href=${`#/admin/tenants/${t.id}`}>${t.name}</a></th>
                      <td>${t.plan}</td>
                      <td><span class=${`badge ${t.status === 'active' ? 'ok' : 'bad'}`}>${t.status}</span></td>
                      <td>${t.serverCount}</td>
                      <td>${fmtMoney(t.monthlySpendUsd)}</td>
                      <td>${fmtTime(t.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </section>`;
}

/** A tenant's servers as the admin sees them: configuration version, bots, players, keys, last contact. */
function serverTable(servers: ServerSummary[]) {
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Config</th>
          <th scope="col">Bots</th>
          <th scope="col">Players</th>
          <th scope="col">Keys</th>
          <th scope="col">Last seen</th>
        </tr>
      </thead>
      <tbody>
        ${servers.map(
          (s) =>
            html`<tr>
              <th scope="row">${s.name}</th>
              <td>v${s.configVersion}</td>
              <td>${s.botCount}</td>
              <td>${s.playersOnline}</td>
              <td>${s.activeKeys}</td>
              <td>${fmtTime(s.lastSeenAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function AdminTenantPage({ id }: { id: string }) {
  const [has, refresh] = useAdminGate();
  const tenant = useLoad(
    () =>
      getAdminToken()
        ? call<Tenant & { servers: ServerSummary[] }>('GET', `/v1/admin/tenants/${encodeURIComponent(id)}`, { auth: 'admin' })
        : Promise.resolve(undefined),
    [id, has],
  );
  const [error, setError] = useState<string | null>(null);
  if (!has) return html`<${TokenGate} onToken=${refresh} />`;
  const t = tenant.data;
  const toggle = async () => {
    if (!t) return;
    const action = t.status === 'active' ? 'suspend' : 'resume';
    if (action === 'suspend' && !confirm(`Suspend ${t.name}? Every session and key of the tenant stops working at once.`)) return;
    setError(null);
    try {
      await call('POST', `/v1/admin/tenants/${t.id}/${action}`, { auth: 'admin' });
      await tenant.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return html`<section>
    <p class="crumbs"><a href="#/admin">Tenants</a> ›</p>
    <h1>${t?.name ?? `Tenant ${id}`}</h1>
    <${ErrorBox} error=${error ?? tenant.error} />
    ${
      t
        ? html`<dl class="kpis">
              <div class="kpi">
                <dt>Plan</dt>
                <dd>${t.plan}</dd>
              </div>
              <div class="kpi">
                <dt>Status</dt>
                <dd data-tenant-status>${t.status}</dd>
              </div>
              <div class="kpi">
                <dt>Servers</dt>
                <dd>${t.serverCount}</dd>
              </div>
              <div class="kpi">
                <dt>Spend this month</dt>
                <dd>${fmtMoney(t.monthlySpendUsd)}</dd>
              </div>
            </dl>
            <button type="button" class=${t.status === 'active' ? 'danger' : ''} onClick=${toggle}>
              ${t.status === 'active' ? 'Suspend tenant' : 'Resume tenant'}
            </button>
            <h2>Servers</h2>
            ${t.servers.length === 0 ? html`<p class="empty">No servers.</p>` : null} ${t.servers.length > 0 ? serverTable(t.servers) : null}`
        : null
    }
  </section>`;
}
