import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, callAllPages, messageOf } from '../api.js';
import { Checkbox, ErrorBox, NumberField, ShownOnce, TextField, fmtTime, useLoad } from '../ui.js';
import { SCOPES } from '../server-mirror.js';

interface ApiKey {
  id: number;
  name: string;
  preview: string;
  createdAt: string;
  revokedAt: string | null;
}

interface PersonalToken {
  id: number;
  name: string;
  scopes: string[];
  preview: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

function statusOf(t: { revokedAt: string | null; expiresAt?: string | null }): string {
  if (t.revokedAt) return `revoked ${fmtTime(t.revokedAt)}`;
  if (t.expiresAt && Date.parse(t.expiresAt) <= Date.now()) return `expired ${fmtTime(t.expiresAt)}`;
  return t.expiresAt ? `active until ${fmtTime(t.expiresAt)}` : 'active';
}

function ApiKeys() {
  const keys = useLoad(() => callAllPages<ApiKey>('/v1/api-keys'), []);
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const r = await call<{ key: string }>('POST', '/v1/api-keys', { body: { name: name.trim() } });
      setFresh(r.key);
      setName('');
      await keys.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const revoke = async (k: ApiKey) => {
    if (!confirm(`Revoke API key "${k.name}" (${k.preview}…)? Calls made with it stop working at once.`)) return;
    setError(null);
    try {
      await call('DELETE', `/v1/api-keys/${k.id}`);
      await keys.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return html`<section aria-labelledby="api-keys-h">
    <h2 id="api-keys-h">Property-video API keys</h2>
    <p class="hint">Platforms call the property-video API with a key (<code>bpk_…</code>); it needs the agency plan or higher.</p>
    <form onSubmit=${create} class="inline-form">
      <${TextField} id="api-key-name" label="API key name" value=${name} onValue=${setName} required maxLength=${200} />
      <button type="submit" disabled=${!name.trim()}>Create API key</button>
    </form>
    ${fresh ? html`<${ShownOnce} label="New API key" value=${fresh} />` : null}
    <${ErrorBox} error=${error ?? keys.error} />
    ${keys.data && keys.data.length === 0 ? html`<p class="empty">No API keys yet.</p>` : null}
    ${
      keys.data && keys.data.length > 0
        ? html`<div class="table-wrap">
            <table>
              <caption class="sr-only">
                API keys
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Status</th>
                  <th scope="col"><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${keys.data.map(
                  (k) =>
                    html`<tr>
                      <th scope="row">${k.name}</th>
                      <td><code>${k.preview}…</code></td>
                      <td>${fmtTime(k.createdAt)}</td>
                      <td>${statusOf(k)}</td>
                      <td>
                        ${k.revokedAt ? null : html`<button type="button" class="danger" onClick=${() => revoke(k)} aria-label=${`Revoke API key ${k.name}`}>Revoke</button>`}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </section>`;
}

/** The user's tokens: name, preview, scopes, last use and status, each revocable until revoked. */
function tokenTable(tokens: PersonalToken[], revoke: (t: PersonalToken) => Promise<void>) {
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        Personal access tokens
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Token</th>
          <th scope="col">Scopes</th>
          <th scope="col">Last used</th>
          <th scope="col">Status</th>
          <th scope="col"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${tokens.map(
          (t) =>
            html`<tr>
              <th scope="row">${t.name}</th>
              <td><code>${t.preview}…</code></td>
              <td>${t.scopes.join(', ')}</td>
              <td>${fmtTime(t.lastUsedAt)}</td>
              <td>${statusOf(t)}</td>
              <td>
                ${t.revokedAt ? null : html`<button type="button" class="danger" onClick=${() => revoke(t)} aria-label=${`Revoke token ${t.name}`}>Revoke</button>`}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function PersonalTokens() {
  const tokens = useLoad(() => callAllPages<PersonalToken>('/v1/tokens'), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['config:write']);
  const [days, setDays] = useState(NaN);
  const [fresh, setFresh] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const toggle = (scope: string, on: boolean) => setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const body = { name: name.trim(), scopes, ...(Number.isNaN(days) ? {} : { expires_in_days: days }) };
      const r = await call<{ token: string }>('POST', '/v1/tokens', { body });
      setFresh(r.token);
      setName('');
      await tokens.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const revoke = async (t: PersonalToken) => {
    if (!confirm(`Revoke token "${t.name}" (${t.preview}…)? Scripts using it stop working at once.`)) return;
    setError(null);
    try {
      await call('DELETE', `/v1/tokens/${t.id}`);
      await tokens.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return html`<section aria-labelledby="tokens-h">
    <h2 id="tokens-h">Personal access tokens</h2>
    <p class="hint">For scripts and CI: <code>BRAINSTEM_TOKEN=bsu_… npx brainstem config publish --server ID</code>. A token acts as you, within its scopes.</p>
    <form onSubmit=${create}>
      <${TextField} id="token-name" label="Token name" value=${name} onValue=${setName} required maxLength=${200} />
      <fieldset>
        <legend>Scopes</legend>
        ${SCOPES.map((s) => html`<${Checkbox} id=${`scope-${s.id.replace(':', '-')}`} label=${s.label} checked=${scopes.includes(s.id)} onValue=${(on: boolean) => toggle(s.id, on)} />`)}
      </fieldset>
      <${NumberField}
        id="token-days"
        label="Expires after (days)"
        value=${days}
        onValue=${setDays}
        min=${1}
        max=${3650}
        hint="Leave empty for a token that does not expire."
      />
      <button type="submit" disabled=${!name.trim() || scopes.length === 0}>Create token</button>
    </form>
    ${fresh ? html`<${ShownOnce} label="New personal access token" value=${fresh} />` : null}
    <${ErrorBox} error=${error ?? tokens.error} />
    ${tokens.data && tokens.data.length === 0 ? html`<p class="empty">No tokens yet.</p>` : null}
    ${tokens.data && tokens.data.length > 0 ? tokenTable(tokens.data, revoke) : null}
  </section>`;
}

/** API keys and personal access tokens: every long-lived credential of the tenant and the user, listed and revocable. */
export function AccessPage() {
  return html`<div>
    <h1>Keys and tokens</h1>
    <${ApiKeys} />
    <${PersonalTokens} />
  </div>`;
}
