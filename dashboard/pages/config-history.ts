import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, messageOf } from '../api.js';
import type { ConfigBundle } from '../bundle.js';
import { diffJson } from '../diff.js';
import { ErrorBox, TextField, fmtTime } from '../ui.js';

export interface ConfigVersion {
  version: number;
  publishedAt: string;
  publishedBy: string;
  note: string | null;
}

export interface Conflict {
  message: string;
  newer: ConfigVersion[];
}

/** Someone published meanwhile: who and what, and the way back to the new head. */
export function ConflictBox({ conflict, onReload }: { conflict: Conflict | null; onReload: () => void }) {
  if (!conflict) return null;
  return html`<div class="conflict" role="alert" data-conflict>
    <p><strong>Version conflict.</strong> ${conflict.message}</p>
    ${
      conflict.newer.length
        ? html`<ul>
            ${conflict.newer.map((v) => html`<li>Version ${v.version} by ${v.publishedBy} at ${fmtTime(v.publishedAt)}${v.note ? ` — “${v.note}”` : ''}</li>`)}
          </ul>`
        : null
    }
    <p>Your edits are kept in the form. Reload the head to start again from the current version.</p>
    <button type="button" onClick=${onReload}>Reload the current head</button>
  </div>`;
}

/** The note, Publish, Discard, and how many fields still need attention after a refused try (0: none shown). */
export function PublishBar(props: {
  note: string;
  onNote: (v: string) => void;
  noteError: string | undefined;
  busy: boolean;
  dirty: boolean;
  attention: number;
  onDiscard: () => void;
}) {
  const { note, onNote, noteError, busy, dirty, attention, onDiscard } = props;
  return html`<div class="publish-bar">
    <${TextField} id="cfg-note" label="Note for this version (optional)" value=${note} maxLength=${500} onValue=${onNote} error=${noteError} />
    <div class="row">
      <button type="submit" disabled=${busy}>${busy ? 'Publishing…' : 'Publish'}</button>
      <button type="button" class="secondary" disabled=${!dirty} onClick=${onDiscard}>Discard changes</button>
      ${attention ? html`<span class="field-error">${attention} field(s) need attention</span>` : null}
    </div>
  </div>`;
}

export function History({
  id,
  head,
  versions,
  error,
  onRolledBack,
}: {
  id: string;
  head: ConfigBundle;
  versions: ConfigVersion[];
  error: string | null;
  onRolledBack: (b: ConfigBundle) => void;
}) {
  const [picked, setPicked] = useState<{ version: number; bundle: ConfigBundle } | null>(null);
  const [err, setErr] = useState<string | null>(null);

  const show = async (v: number) => {
    setErr(null);
    try {
      setPicked(await call<{ version: number; bundle: ConfigBundle }>('GET', `/v1/servers/${id}/config/versions/${v}`));
    } catch (caught) {
      setErr(messageOf(caught));
    }
  };
  const rollback = async (v: number) => {
    if (!confirm(`Roll back to version ${v}? A new version with its content becomes the head.`)) return;
    setErr(null);
    try {
      const b = await call<ConfigBundle>('POST', `/v1/servers/${id}/config/rollback`, { body: { version: v } });
      setPicked(null);
      onRolledBack(b);
    } catch (caught) {
      setErr(messageOf(caught));
    }
  };
  // Versions differ in their version field by definition; the diff is about content.
  const changes = picked ? diffJson({ ...picked.bundle, version: 0 }, { ...head, version: 0 }) : [];

  return html`<section class="history" aria-labelledby="history-title">
    <h2 id="history-title">Version history</h2>
    <${ErrorBox} error=${err ?? error} />
    <div class="table-wrap">
      <table>
        <caption class="sr-only">
          Published versions, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Published</th>
            <th scope="col">By</th>
            <th scope="col">Note</th>
            <th scope="col"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${versions.map(
            (v) =>
              html`<tr data-version=${v.version}>
                <th scope="row">v${v.version}${v.version === head.version ? ' (head)' : ''}</th>
                <td>${fmtTime(v.publishedAt)}</td>
                <td>${v.publishedBy}</td>
                <td>${v.note ?? ''}</td>
                <td class="actions">
                  <button type="button" class="secondary" onClick=${() => show(v.version)} aria-label=${`Compare version ${v.version} with the head`}>
                    Diff
                  </button>
                  ${v.version === head.version ? null : html`<button type="button" class="secondary" onClick=${() => rollback(v.version)} aria-label=${`Roll back to version ${v.version}`}>Roll back</button>`}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${picked ? versionDiff(picked.version, head.version, changes) : null}
  </section>`;
}

/** What a picked version changes against the head, field by field. */
function versionDiff(version: number, headVersion: number, changes: ReturnType<typeof diffJson>) {
  return html`<div class="diff" aria-live="polite">
    <h3>Version ${version} → head (v${headVersion})</h3>
    ${
      changes.length === 0
        ? html`<p>Same content as the head.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">v${version}</th>
                  <th scope="col">Head</th>
                </tr>
              </thead>
              <tbody>
                ${changes.map(
                  (c) =>
                    html`<tr>
                      <th scope="row"><code>${c.path}</code></th>
                      <td class="del">${JSON.stringify(c.before) ?? '—'}</td>
                      <td class="ins">${JSON.stringify(c.after) ?? '—'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </div>`;
}
