import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, messageOf } from '../api.js';
import { ECONOMIES, POLICY_KEYS, TRAIT_NAMES, validate, type ConfigBundle } from '../bundle.js';
import { DialogueStatus } from './dialogue-status.js';
import { diffJson } from '../diff.js';
import { FlagsEditor } from '../flags.js';
import { Checkbox, ErrorBox, Field, NumberField, Notice, TextField, describedBy, fmtTime, useLoad } from '../ui.js';

interface ConfigVersion {
  version: number;
  publishedAt: string;
  publishedBy: string;
  note: string | null;
}

const idOf = (path: string) => `cfg-${path.replace(/[.[\]]+/g, '-').replace(/-$/, '')}`;
const label = (key: string) =>
  key
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/^Llm/, 'LLM')
    .replace(/^Afk/, 'AFK');

interface Conflict {
  message: string;
  newer: ConfigVersion[];
}

/** `onHead` tells the page around the editor that the head moved (its version badge). */
export function ConfigTab({ id, onHead }: { id: string; onHead?: () => void }) {
  const [head, setHead] = useState<ConfigBundle | null>(null);
  const [draft, setDraft] = useState<ConfigBundle | null>(null);
  const [note, setNote] = useState('');
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [tried, setTried] = useState(false);
  const [unparsedFlags, setUnparsedFlags] = useState<string[]>([]);
  const versions = useLoad(() => call<ConfigVersion[]>('GET', `/v1/servers/${id}/config/versions`), [id, head?.version]);

  const loadHead = async () => {
    setError(null);
    try {
      const b = await call<ConfigBundle>('GET', `/v1/servers/${id}/config`);
      setHead(b);
      setDraft(structuredClone(b));
      setServerErrors({});
      setConflict(null);
      onHead?.();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  useEffect(() => {
    void loadHead();
  }, [id]);

  if (!draft || !head)
    return html`<div>
      <h2>Configuration</h2>
      <${ErrorBox} error=${error} />${error ? null : html`<p>Loading…</p>`}
    </div>`;

  const clientErrors = validate(draft);
  for (const k of unparsedFlags) clientErrors[`flags.${k}`] = 'The flag is not JSON yet.';
  const errors: Record<string, string> = { ...serverErrors, ...clientErrors };
  const err = (path: string) => errors[path];
  const dirty = JSON.stringify(draft) !== JSON.stringify(head);

  const edit = (fn: (d: ConfigBundle) => void) => {
    const next = structuredClone(draft);
    fn(next);
    setDraft(next);
    setDone(null);
  };

  const publish = async (e: Event) => {
    e.preventDefault();
    setTried(true);
    setError(null);
    setDone(null);
    if (Object.keys(clientErrors).length > 0) {
      setError(`Fix the ${Object.keys(clientErrors).length} highlighted field(s) first.`);
      requestAnimationFrame(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus());
      return;
    }
    setBusy(true);
    try {
      const headers: Record<string, string> = note.trim() ? { 'x-config-note': note.trim() } : {};
      const b = await call<ConfigBundle>('PUT', `/v1/servers/${id}/config`, { body: draft, headers });
      setHead(b);
      setDraft(structuredClone(b));
      setNote('');
      setServerErrors({});
      setConflict(null);
      setTried(false);
      setDone(`Published version ${b.version}.`);
      onHead?.();
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 422) {
        setServerErrors(byPath(caught.details));
        setError(`The server refused the bundle: ${caught.details.length} problem(s), shown at the fields.`);
      } else if (caught instanceof ApiError && caught.status === 409) {
        // Someone published meanwhile: show who and what, and let the operator take the new head.
        let newer: ConfigVersion[] = [];
        try {
          newer = (await call<ConfigVersion[]>('GET', `/v1/servers/${id}/config/versions`)).filter((v) => v.version > draft.version);
        } catch {
          newer = [];
        }
        setConflict({ message: caught.message, newer });
      } else setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  const unmatched = Object.entries(serverErrors).filter(
    ([path]) => !document.getElementById(idOf(path)) && !KNOWN_GROUPS.includes(path) && !(path === 'flags' || path.startsWith('flags.')),
  );
  const flagErrors = (prefix: string): [string, string][] =>
    Object.entries(serverErrors).filter(([p]) => p === prefix || p.startsWith(`${prefix}.`) || p.startsWith(`${prefix}[`));
  const f = draft.flavor;
  const pop = draft.population;
  const lim = draft.speech.limits;
  const pc = draft.speech.phrase_cache;

  return html`<div class="config">
    <h2>Configuration <span class="badge">editing v${draft.version}</span></h2>
    ${
      conflict
        ? html`<div class="conflict" role="alert" data-conflict>
            <p><strong>Version conflict.</strong> ${conflict.message}</p>
            ${
              conflict.newer.length
                ? html`<ul>
                    ${conflict.newer.map((v) => html`<li>Version ${v.version} by ${v.publishedBy} at ${fmtTime(v.publishedAt)}${v.note ? ` — “${v.note}”` : ''}</li>`)}
                  </ul>`
                : null
            }
            <p>Your edits are kept in the form. Reload the head to start again from the current version.</p>
            <button type="button" onClick=${loadHead}>Reload the current head</button>
          </div>`
        : null
    }
    ${done ? html`<${Notice}>${done}<//>` : null}
    <${ErrorBox} error=${error} />
    ${
      unmatched.length
        ? html`<ul class="error-box">
            ${unmatched.map(([p, m]) => html`<li><code>${p || '(bundle)'}</code>: ${m}</li>`)}
          </ul>`
        : null
    }

    <form onSubmit=${publish} novalidate>
      <fieldset>
        <legend>Policy switches</legend>
        <p class="hint">Each subsystem of the brain; off disables it on every bot.</p>
        <div class="grid-3">
          ${POLICY_KEYS.map(
            (k) =>
              html`<${Checkbox}
                id=${idOf(`policy.${k}`)}
                label=${label(k)}
                checked=${draft.policy[k] !== false}
                error=${err(`policy.${k}`)}
                onValue=${(v: boolean) =>
                  edit((d) => {
                    d.policy[k] = v;
                  })}
              />`,
          )}
        </div>
        <${DialogueStatus} serverId=${id} on=${draft.policy.llm_dialogue !== false} />
      </fieldset>

      <fieldset>
        <legend>Population</legend>
        <p class="hint">Each bot draws its traits around the mean, up to the spread either side (0–1).</p>
        <div class="traits">
          ${TRAIT_NAMES.map(
            (t) =>
              html`<div class="trait">
                <h4>${label(t)}</h4>
                ${(['mean', 'spread'] as const).map((part) => {
                  const path = `population.${t}.${part}`;
                  const fid = idOf(path);
                  const v = pop[t][part];
                  return html`<${Field} id=${fid} label=${`${label(t)} ${part}`} error=${err(path)}>
                    <div class="slider">
                      <input
                        id=${fid}
                        type="range"
                        min="0"
                        max="1"
                        step="0.01"
                        value=${v}
                        onInput=${(e: Event) =>
                          edit((d) => {
                            d.population[t][part] = (e.currentTarget as HTMLInputElement).valueAsNumber;
                          })}
                        ...${describedBy(fid, err(path))}
                      />
                      <output for=${fid}>${v.toFixed(2)}</output>
                    </div>
                  <//>`;
                })}
              </div>`,
          )}
        </div>
        <div class="row">
          <${NumberField}
            id=${idOf('population.session_min[0]')}
            label="Session length min (minutes)"
            value=${pop.session_min[0]}
            min=${0}
            step="any"
            error=${err('population.session_min[0]') ?? err('population.session_min')}
            onValue=${(v: number) =>
              edit((d) => {
                d.population.session_min[0] = v;
              })}
          />
          <${NumberField}
            id=${idOf('population.session_min[1]')}
            label="Session length max (minutes)"
            value=${pop.session_min[1]}
            min=${0}
            step="any"
            error=${err('population.session_min[1]')}
            onValue=${(v: number) =>
              edit((d) => {
                d.population.session_min[1] = v;
              })}
          />
        </div>
      </fieldset>

      <fieldset>
        <legend>Speech</legend>
        <div class="row">
          ${(['per_5min', 'per_hour', 'per_day'] as const).map(
            (k) =>
              html`<${NumberField}
                id=${idOf(`speech.limits.${k}`)}
                label=${`Lines ${k.replace('per_', 'per ').replace('5min', '5 min')}`}
                value=${lim[k]}
                min=${0}
                error=${err(`speech.limits.${k}`)}
                onValue=${(v: number) =>
                  edit((d) => {
                    d.speech.limits[k] = v;
                  })}
              />`,
          )}
          <${Field} id=${idOf('speech.limits.economy')} label="Economy" error=${err('speech.limits.economy')}>
            <select
              id=${idOf('speech.limits.economy')}
              value=${lim.economy}
              onChange=${(e: Event) =>
                edit((d) => {
                  d.speech.limits.economy = (e.currentTarget as HTMLSelectElement).value as never;
                })}
            >
              ${ECONOMIES.map((x) => html`<option value=${x}>${x}</option>`)}
            </select>
          <//>
        </div>
        <h3>Phrase cache</h3>
        <div class="row">
          <${NumberField}
            id=${idOf('speech.phrase_cache.variety_target')}
            label="Variety target"
            value=${pc.variety_target}
            min=${0}
            error=${err('speech.phrase_cache.variety_target')}
            onValue=${(v: number) =>
              edit((d) => {
                d.speech.phrase_cache.variety_target = v;
              })}
          />
          <${NumberField}
            id=${idOf('speech.phrase_cache.max_reuse')}
            label="Max reuse"
            value=${pc.max_reuse}
            min=${0}
            step="any"
            error=${err('speech.phrase_cache.max_reuse')}
            onValue=${(v: number) =>
              edit((d) => {
                d.speech.phrase_cache.max_reuse = v;
              })}
          />
          <${Checkbox}
            id=${idOf('speech.phrase_cache.allow_player_names')}
            label="Allow player names in cached lines"
            checked=${pc.allow_player_names}
            error=${err('speech.phrase_cache.allow_player_names')}
            onValue=${(v: boolean) =>
              edit((d) => {
                d.speech.phrase_cache.allow_player_names = v;
              })}
          />
        </div>
      </fieldset>

      <fieldset>
        <legend>Flavor</legend>
        <${Checkbox}
          id=${idOf('flavor.enabled')}
          label="Flavor enabled"
          checked=${f.enabled}
          error=${err('flavor.enabled')}
          onValue=${(v: boolean) =>
            edit((d) => {
              d.flavor.enabled = v;
            })}
        />
        <${TextField}
          id=${idOf('flavor.global')}
          label="Global flavor text"
          multiline
          value=${f.global}
          maxLength=${2000}
          error=${err('flavor.global')}
          onValue=${(v: string) =>
            edit((d) => {
              d.flavor.global = v;
            })}
        />
        <h3 id="themes-title">Themes</h3>
        ${err('flavor.themes') ? html`<p class="field-error">${err('flavor.themes')}</p>` : null}
        ${f.themes.length === 0 ? html`<p class="empty">No themes.</p>` : null}
        <ol class="themes" aria-labelledby="themes-title">
          ${f.themes.map(
            (t, i) =>
              html`<li class="theme">
                <${TextField}
                  id=${idOf(`flavor.themes[${i}].text`)}
                  label=${`Theme ${i + 1} text`}
                  value=${t.text}
                  error=${err(`flavor.themes[${i}].text`)}
                  onValue=${(v: string) =>
                    edit((d) => {
                      d.flavor.themes[i]!.text = v;
                    })}
                />
                <${NumberField}
                  id=${idOf(`flavor.themes[${i}].weight`)}
                  label=${`Theme ${i + 1} weight`}
                  value=${t.weight}
                  min=${0}
                  step="any"
                  error=${err(`flavor.themes[${i}].weight`)}
                  onValue=${(v: number) =>
                    edit((d) => {
                      d.flavor.themes[i]!.weight = v;
                    })}
                />
                <button
                  type="button"
                  class="secondary"
                  aria-label=${`Remove theme ${i + 1}`}
                  onClick=${() =>
                    edit((d) => {
                      d.flavor.themes.splice(i, 1);
                    })}
                >
                  Remove
                </button>
              </li>`,
          )}
        </ol>
        <button
          type="button"
          class="secondary"
          onClick=${() =>
            edit((d) => {
              d.flavor.themes.push({ text: '', weight: 1 });
            })}
        >
          Add theme
        </button>
        <div class="row">
          <${NumberField}
            id=${idOf('flavor.themes_per_bot')}
            label="Themes per bot"
            value=${f.themes_per_bot}
            min=${0}
            max=${f.themes.length}
            error=${err('flavor.themes_per_bot')}
            onValue=${(v: number) =>
              edit((d) => {
                d.flavor.themes_per_bot = v;
              })}
          />
          <${NumberField}
            id=${idOf('flavor.seed')}
            label="Seed"
            value=${f.seed}
            error=${err('flavor.seed')}
            onValue=${(v: number) =>
              edit((d) => {
                d.flavor.seed = v;
              })}
          />
        </div>
      </fieldset>

      <${FlagsEditor}
        key=${`flags-${head.version}`}
        flags=${draft.flags ?? {}}
        errors=${flagErrors}
        onUnparsed=${setUnparsedFlags}
        onFlags=${(next: ConfigBundle['flags']) =>
          edit((d) => {
            if (next) d.flags = next;
            else delete d.flags;
          })}
      />

      <fieldset>
        <legend>Game framing</legend>
        <div class="check">
          <input
            type="radio"
            id="game-default"
            name="game-mode"
            checked=${draft.game === null}
            onChange=${() =>
              edit((d) => {
                d.game = null;
              })}
          />
          <label for="game-default">Default survival (no framing)</label>
        </div>
        <div class="check">
          <input
            type="radio"
            id="game-custom"
            name="game-mode"
            checked=${draft.game !== null}
            onChange=${() =>
              edit((d) => {
                d.game = head.game ?? { name: '', premise: '', goal: '' };
              })}
          />
          <label for="game-custom">Custom framing</label>
        </div>
        ${
          draft.game
            ? html`${(['name', 'premise', 'goal'] as const).map(
                (k) =>
                  html`<${TextField}
                    id=${idOf(`game.${k}`)}
                    label=${`Game ${k}`}
                    multiline=${k !== 'name'}
                    maxLength=${2000}
                    value=${draft.game![k]}
                    error=${err(`game.${k}`)}
                    onValue=${(v: string) =>
                      edit((d) => {
                        d.game![k] = v;
                      })}
                  />`,
              )}`
            : null
        }
      </fieldset>

      <div class="publish-bar">
        <${TextField}
          id="cfg-note"
          label="Note for this version (optional)"
          value=${note}
          maxLength=${500}
          onValue=${setNote}
          error=${serverErrors['X-Config-Note'] ?? serverErrors.note}
        />
        <div class="row">
          <button type="submit" disabled=${busy}>${busy ? 'Publishing…' : 'Publish'}</button>
          <button
            type="button"
            class="secondary"
            disabled=${!dirty}
            onClick=${() => {
              setDraft(structuredClone(head));
              setServerErrors({});
            }}
          >
            Discard changes
          </button>
          ${tried && Object.keys(clientErrors).length ? html`<span class="field-error">${Object.keys(clientErrors).length} field(s) need attention</span>` : null}
        </div>
      </div>
    </form>

    <${History}
      id=${id}
      head=${head}
      versions=${versions.data ?? []}
      error=${versions.error}
      onRolledBack=${(b: ConfigBundle) => {
        setHead(b);
        setDraft(structuredClone(b));
        setDone(`Rolled back: version ${b.version} is now the head.`);
        onHead?.();
      }}
    />
  </div>`;
}

/** Paths the form shows as a group message, not at one control. */
const KNOWN_GROUPS = ['population.session_min', 'flavor.themes'];

function History({
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
    ${
      picked
        ? html`<div class="diff" aria-live="polite">
            <h3>Version ${picked.version} → head (v${head.version})</h3>
            ${
              changes.length === 0
                ? html`<p>Same content as the head.</p>`
                : html`<div class="table-wrap">
                    <table>
                      <thead>
                        <tr>
                          <th scope="col">Field</th>
                          <th scope="col">v${picked.version}</th>
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
          </div>`
        : null
    }
  </section>`;
}
