import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, messageOf } from '../api.js';
import { validate, type ConfigBundle } from '../bundle.js';
import { FlagsEditor } from '../flags.js';
import { ErrorBox, Notice, useLoad } from '../ui.js';
import { ConflictBox, History, PublishBar, type Conflict, type ConfigVersion } from './config-history.js';
import { FlavorSection, GameSection, PolicySection, PopulationSection, SpeechSection, idOf } from './config-sections.js';

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

  return html`<div class="config">
    <h2>Configuration <span class="badge">editing v${draft.version}</span></h2>
    <${ConflictBox} conflict=${conflict} onReload=${loadHead} />
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
      <${PolicySection} serverId=${id} draft=${draft} err=${err} edit=${edit} />
      <${PopulationSection} draft=${draft} err=${err} edit=${edit} />
      <${SpeechSection} draft=${draft} err=${err} edit=${edit} />
      <${FlavorSection} draft=${draft} err=${err} edit=${edit} />

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

      <${GameSection} draft=${draft} head=${head} err=${err} edit=${edit} />

      <${PublishBar}
        note=${note}
        onNote=${setNote}
        noteError=${serverErrors['X-Config-Note'] ?? serverErrors.note}
        busy=${busy}
        dirty=${dirty}
        attention=${tried ? Object.keys(clientErrors).length : 0}
        onDiscard=${() => {
          setDraft(structuredClone(head));
          setServerErrors({});
        }}
      />
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
