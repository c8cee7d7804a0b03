import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, callAllPages, messageOf } from '../api.js';
import { ErrorBox, ShownOnce, fmtTime, useLoad } from '../ui.js';

interface ServerKey {
  id: number;
  preview: string;
  createdAt: string;
  revokedAt: string | null;
}

export function KeysTab({ id }: { id: string }) {
  const keys = useLoad(() => callAllPages<ServerKey>(`/v1/servers/${id}/keys`), [id]);
  const [fresh, setFresh] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const issue = async () => {
    setError(null);
    try {
      const r = await call<{ key: string }>('POST', `/v1/servers/${id}/keys`);
      setFresh(r.key);
      await keys.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const revoke = async (k: ServerKey) => {
    if (!confirm(`Revoke key ${k.preview}…? The sidecar using it stops working at once.`)) return;
    setError(null);
    try {
      await call('DELETE', `/v1/servers/${id}/keys/${k.id}`);
      await keys.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return html`<div>
    <h2>Server keys</h2>
    <p class="hint">The sidecar authenticates with a server key (<code>bsk_…</code>) and signs every request with it.</p>
    <button type="button" onClick=${issue}>Issue a key</button>
    ${fresh ? html`<${ShownOnce} label="New server key" value=${fresh} />` : null}
    <${ErrorBox} error=${error ?? keys.error} />
    ${keys.data && keys.data.length === 0 ? html`<p class="empty">No keys yet.</p>` : null}
    ${
      keys.data && keys.data.length > 0
        ? html`<div class="table-wrap">
            <table>
              <caption class="sr-only">
                Server keys
              </caption>
              <thead>
                <tr>
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
                      <th scope="row"><code>${k.preview}…</code></th>
                      <td>${fmtTime(k.createdAt)}</td>
                      <td>${k.revokedAt ? `revoked ${fmtTime(k.revokedAt)}` : 'active'}</td>
                      <td>
                        ${k.revokedAt ? null : html`<button type="button" class="danger" onClick=${() => revoke(k)} aria-label=${`Revoke key ${k.preview}`}>Revoke</button>`}
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
