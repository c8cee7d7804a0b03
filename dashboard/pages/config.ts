import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, callAllPages, messageOf } from '../api.js';
import { validate, type ConfigBundle } from '../bundle.js';
import { FlagsEditor } from '../flags.js';
import { ErrorBox, Notice, useLoad } from '../ui.js';
import { ConflictBox, History, PublishBar, type Conflict, type ConfigVersion } from './config-history.js';
import { FlavorSection, GameSection, PolicySection, PopulationSection, SpeechSection, idOf } from './config-sections.js';

/**
 * The head the server holds and the draft edited from it, with what the server said of the
 * last try. `adopt` is the head moving (loaded, published, rolled back): the draft starts
 * again from it.
 */
function useConfigHead(id: string, onHead: (() => void) | undefined) {
  const [head, setHead] = useState<ConfigBundle | null>(null);
  const [draft, setDraft] = useState<ConfigBundle | null>(null);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const adopt = (b: ConfigBundle) => {
    setHead(b);
    setDraft(structuredClone(b));
  };
  const loadHead = async () => {
    setError(null);
    try {
      adopt(await call<ConfigBundle>('GET', `/v1/servers/${id}/config`));
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
  return { head, draft, setDraft, adopt, loadHead, serverErrors, setServerErrors, error, setError, conflict, setConflict };
}

/** What a refused publish shows: the fields the server named, who published meanwhile, or the message. */
async function publishRefusal(
  caught: unknown,
  id: string,
  draftVersion: number,
): Promise<{ serverErrors?: Record<string, string>; error?: string; conflict?: Conflict }> {
  if (caught instanceof ApiError && caught.status === 422) {
    return { serverErrors: byPath(caught.details), error: `The server refused the bundle: ${caught.details.length} problem(s), shown at the fields.` };
  }
  if (caught instanceof ApiError && caught.status === 409) {
    // Someone published meanwhile: show who and what, and let the operator take the new head.
    let newer: ConfigVersion[] = [];
    try {
      newer = (await callAllPages<ConfigVersion>(`/v1/servers/${id}/config/versions`)).filter((v) => v.version > draftVersion);
    } catch {
      newer = [];
    }
    return { conflict: { message: caught.message, newer } };
  }
  return { error: messageOf(caught) };
}

/** The server's complaints about paths the form has no control or group message for. */
function UnmatchedErrors({ serverErrors }: { serverErrors: Record<string, string> }) {
  const unmatched = Object.entries(serverErrors).filter(
    ([path]) => !document.getElementById(idOf(path)) && !KNOWN_GROUPS.includes(path) && !(path === 'flags' || path.startsWith('flags.')),
  );
  if (!unmatched.length) return null;
  return html`<ul class="error-box">
    ${unmatched.map(([p, m]) => html`<li><code>${p || '(bundle)'}</code>: ${m}</li>`)}
  </ul>`;
}

/** The bundle's sections, each editing the draft through `edit`. */
function ConfigSections(props: {
  id: string;
  head: ConfigBundle;
  draft: ConfigBundle;
  err: (path: string) => string | undefined;
  edit: (fn: (d: ConfigBundle) => void) => void;
  serverErrors: Record<string, string>;
  onUnparsed: (keys: string[]) => void;
}) {
  const { id, head, draft, err, edit, serverErrors } = props;
  const flagErrors = (prefix: string): [string, string][] =>
    Object.entries(serverErrors).filter(([p]) => p === prefix || p.startsWith(`${prefix}.`) || p.startsWith(`${prefix}[`));
  return html`<${PolicySection} serverId=${id} draft=${draft} err=${err} edit=${edit} />
    <${PopulationSection} draft=${draft} err=${err} edit=${edit} />
    <${SpeechSection} draft=${draft} err=${err} edit=${edit} />
    <${FlavorSection} draft=${draft} err=${err} edit=${edit} />

    <${FlagsEditor}
      key=${`flags-${head.version}`}
      flags=${draft.flags ?? {}}
      errors=${flagErrors}
      onUnparsed=${props.onUnparsed}
      onFlags=${(next: ConfigBundle['flags']) =>
        edit((d) => {
          if (next) d.flags = next;
          else delete d.flags;
        })}
    />

    <${GameSection} draft=${draft} head=${head} err=${err} edit=${edit} />`;
}

/** `onHead` tells the page around the editor that the head moved (its version badge). */
export function ConfigTab({ id, onHead }: { id: string; onHead?: () => void }) {
  const state = useConfigHead(id, onHead);
  const versions = useLoad(() => callAllPages<ConfigVersion>(`/v1/servers/${id}/config/versions`), [id, state.head?.version]);
  const { head, draft, error } = state;
  if (!draft || !head)
    return html`<div>
      <h2>Configuration</h2>
      <${ErrorBox} error=${error} />${error ? null : html`<p>Loading…</p>`}
    </div>`;
  return html`<${ConfigEditor} id=${id} onHead=${onHead} state=${{ ...state, head, draft }} versions=${versions} />`;
}

type HeadState = ReturnType<typeof useConfigHead>;

/** The form over a loaded draft: the sections, the publish bar and the history. */
function ConfigEditor({
  id,
  onHead,
  state,
  versions,
}: {
  id: string;
  onHead: (() => void) | undefined;
  state: HeadState & { head: ConfigBundle; draft: ConfigBundle };
  versions: { data: ConfigVersion[] | undefined; error: string | null };
}) {
  const { head, draft, setDraft, adopt, loadHead, serverErrors, setServerErrors, error, conflict } = state;
  const [unparsedFlags, setUnparsedFlags] = useState<string[]>([]);
  const { note, setNote, done, setDone, busy, tried, publish } = usePublish(id, state, onHead);

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

  return html`<div class="config">
    <h2>Configuration <span class="badge">editing v${draft.version}</span></h2>
    <${ConflictBox} conflict=${conflict} onReload=${loadHead} />
    ${done ? html`<${Notice}>${done}<//>` : null}
    <${ErrorBox} error=${error} />
    <${UnmatchedErrors} serverErrors=${serverErrors} />

    <form onSubmit=${(e: Event) => publish(e, Object.keys(clientErrors).length)} novalidate>
      <${ConfigSections} id=${id} head=${head} draft=${draft} err=${err} edit=${edit} serverErrors=${serverErrors} onUnparsed=${setUnparsedFlags} />
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
        adopt(b);
        setDone(`Rolled back: version ${b.version} is now the head.`);
        onHead?.();
      }}
    />
  </div>`;
}

/**
 * Publishing the draft: the note, whether a try is under way or was refused for fields still
 * invalid here (`tried`), and what the last one did (`done`).
 */
function usePublish(id: string, state: HeadState & { draft: ConfigBundle }, onHead: (() => void) | undefined) {
  const { draft, adopt, setServerErrors, setError, setConflict } = state;
  const [note, setNote] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [tried, setTried] = useState(false);
  const publish = async (e: Event, invalid: number) => {
    e.preventDefault();
    setTried(true);
    setError(null);
    setDone(null);
    if (invalid > 0) {
      setError(`Fix the ${invalid} highlighted field(s) first.`);
      requestAnimationFrame(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus());
      return;
    }
    setBusy(true);
    try {
      // A header carries bytes: a note that is not plain ASCII goes as RFC 8187's UTF-8''percent-encoding.
      const text = note.trim();
      const headers: Record<string, string> = text ? { 'x-config-note': /^[\x20-\x7e]*$/.test(text) ? text : `UTF-8''${encodeURIComponent(text)}` } : {};
      const b = await call<ConfigBundle>('PUT', `/v1/servers/${id}/config`, { body: draft, headers });
      adopt(b);
      setNote('');
      setServerErrors({});
      setConflict(null);
      setTried(false);
      setDone(`Published version ${b.version}.`);
      onHead?.();
    } catch (caught) {
      const refused = await publishRefusal(caught, id, draft.version);
      if (refused.serverErrors) setServerErrors(refused.serverErrors);
      if (refused.error) setError(refused.error);
      if (refused.conflict) setConflict(refused.conflict);
    } finally {
      setBusy(false);
    }
  };
  return { note, setNote, done, setDone, busy, tried, publish };
}

/** Paths the form shows as a group message, not at one control. */
const KNOWN_GROUPS = ['population.session_min', 'flavor.themes'];
