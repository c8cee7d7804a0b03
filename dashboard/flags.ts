import { useState } from 'preact/hooks';
import { html } from './html.js';
import { Field, describedBy } from './ui.js';

/**
 * Game flags on the configuration page: each flag's definition edited as JSON beside the rest
 * of the bundle, and a preview of who gets what (flag-eval.ts). The server stays the validator.
 */

import { evaluate, FLAG_TYPES, type FlagDef, type Flags, type FlagType, type Outcome, type PreviewContext } from './flag-eval.js';

const STARTER: Record<FlagType, unknown> = { boolean: false, string: '', number: 0, object: {} };
export const flagFieldId = (key: string) => `cfg-flags-${key.replace(/[^A-Za-z0-9_-]/g, '-')}`;

interface EditorProps {
  flags: Flags;
  errors: (prefix: string) => [string, string][];
  /** Replaces the draft's flags (undefined removes the field). */
  onFlags: (next: Flags | undefined) => void;
  /** Flags whose text is not JSON yet: publishing waits for them. */
  onUnparsed: (keys: string[]) => void;
}

/** One flag's JSON, kept as typed while it does not parse (the draft keeps the last that did). */
function FlagText({
  name,
  def,
  onDef,
  onParse,
  errors,
}: {
  name: string;
  def: FlagDef;
  onDef: (d: FlagDef) => void;
  onParse: (ok: boolean) => void;
  errors: [string, string][];
}) {
  const [text, setText] = useState(JSON.stringify(def, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const id = flagFieldId(name);
  const message = parseError ?? (errors.length ? errors.map(([p, m]) => `${p}: ${m}`).join('; ') : undefined);
  return html`<${Field} id=${id} label=${`Flag ${name}`} error=${message}>
    <textarea
      id=${id}
      class="code"
      rows=${Math.min(14, text.split('\n').length + 1)}
      value=${text}
      spellcheck=${false}
      onInput=${(e: Event) => {
        const t = (e.currentTarget as HTMLTextAreaElement).value;
        setText(t);
        try {
          const parsed = JSON.parse(t) as FlagDef;
          setParseError(null);
          onParse(true);
          onDef(parsed);
        } catch (err) {
          setParseError(`Not JSON yet: ${(err as Error).message}`);
          onParse(false);
        }
      }}
      ...${describedBy(id, message)}
    ></textarea>
  <//>`;
}

export function FlagsEditor({ flags, errors, onFlags, onUnparsed }: EditorProps) {
  const [unparsed, setUnparsed] = useState<string[]>([]);
  // The preview's context lives here, not in FlagPreview, so it outlives a moment with no flags.
  const [ctx, setCtx] = useState<PreviewContext>({ server: '', map: '', players: null, at: Date.now() });
  const [keys, setKeys] = useState('player-1, player-2, player-3');
  const names = Object.keys(flags);
  const mark = (name: string, ok: boolean) => {
    const next = ok ? unparsed.filter((k) => k !== name) : [...new Set([...unparsed, name])];
    setUnparsed(next);
    onUnparsed(next);
  };

  return html`<fieldset class="flags">
    <legend>Game flags</legend>
    <p class="hint">
      Live settings of the game, read by mods over OFREP on the sidecar. Each flag: <code>{"type", "value", "rules": [{"if": {…}, "value"}]}</code>; conditions
      on <code>server</code>, <code>map</code>, <code>players</code> {min, max}, <code>time</code> {from, to} (UTC) and <code>percentage</code> of
      <code>targetingKey</code>. The first matching rule wins.
    </p>
    ${errors('flags')
      .filter(([p]) => p === 'flags')
      .map(([, m]) => html`<p class="field-error">${m}</p>`)}
    ${names.length === 0 ? html`<p class="empty">No flags.</p>` : null}
    <div class="flag-list">
      ${names.map(
        (name) =>
          html`<div class="flag" key=${name} data-flag=${name}>
            <${FlagText}
              name=${name}
              def=${flags[name]}
              errors=${errors(`flags.${name}`)}
              onParse=${(ok: boolean) => mark(name, ok)}
              onDef=${(def: FlagDef) => onFlags({ ...flags, [name]: def })}
            />
            <button
              type="button"
              class="secondary"
              aria-label=${`Remove flag ${name}`}
              onClick=${() => {
                const next = { ...flags };
                delete next[name];
                mark(name, true);
                onFlags(Object.keys(next).length ? next : undefined);
              }}
            >
              Remove
            </button>
          </div>`,
      )}
    </div>
    <${NewFlag} flags=${flags} onFlags=${onFlags} />
    ${names.length ? html`<${FlagPreview} flags=${flags} ctx=${ctx} onCtx=${setCtx} keys=${keys} onKeys=${setKeys} />` : null}
  </fieldset>`;
}

/** The key and type of a new flag, added with its type's starter value. */
function NewFlag({ flags, onFlags }: { flags: Flags; onFlags: (next: Flags | undefined) => void }) {
  const [newKey, setNewKey] = useState('');
  const [newType, setNewType] = useState<FlagType>('boolean');
  const keyProblem =
    newKey && !/^[A-Za-z0-9_.-]{1,64}$/.test(newKey) ? 'Letters, digits, _ - . only (1–64).' : newKey in flags ? 'A flag with this key exists.' : null;
  return html`<div class="row">
    <${Field} id="cfg-new-flag" label="New flag key" error=${keyProblem ?? undefined}>
      <input
        id="cfg-new-flag"
        value=${newKey}
        onInput=${(e: Event) => setNewKey((e.currentTarget as HTMLInputElement).value.trim())}
        ...${describedBy('cfg-new-flag', keyProblem ?? undefined)}
      />
    <//>
    <${Field} id="cfg-new-flag-type" label="Type">
      <select id="cfg-new-flag-type" value=${newType} onChange=${(e: Event) => setNewType((e.currentTarget as HTMLSelectElement).value as FlagType)}>
        ${FLAG_TYPES.map((t) => html`<option value=${t}>${t}</option>`)}
      </select>
    <//>
    <button
      type="button"
      class="secondary"
      disabled=${!newKey || keyProblem !== null}
      onClick=${() => {
        onFlags({ ...flags, [newKey]: { type: newType, value: STARTER[newType] } });
        setNewKey('');
      }}
    >
      Add flag
    </button>
  </div>`;
}

/** One flag's outcome for a player: the value, or why there is none. */
const showOutcome = (o: Outcome) =>
  'error' in o
    ? html`<span class="warn">${o.error}</span>`
    : html`<code>${JSON.stringify(o.value)}</code> <span class="muted-text">${o.variant} · ${o.reason}</span>`;

/** Who gets what: every flag evaluated for up to eight players in the context the operator sets. */
function FlagPreview(props: { flags: Flags; ctx: PreviewContext; onCtx: (c: PreviewContext) => void; keys: string; onKeys: (k: string) => void }) {
  const { flags, ctx, keys } = props;
  const names = Object.keys(flags);
  const targets = keys
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .slice(0, 8);
  return html`<div class="flag-preview" data-flag-preview>
    <h3>Who gets what</h3>
    <${PreviewContextFields} ctx=${ctx} onCtx=${props.onCtx} keys=${keys} onKeys=${props.onKeys} />
    <table class="preview">
      <thead>
        <tr>
          <th>flag</th>
          ${targets.map((t) => html`<th>${t}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${names.map(
          (name) =>
            html`<tr data-preview-flag=${name}>
              <th>${name}</th>
              ${targets.map((t) => html`<td>${showOutcome(evaluate(name, flags[name]!, ctx, t))}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The preview's server, map, player count, time and player ids. */
function PreviewContextFields({
  ctx,
  onCtx,
  keys,
  onKeys,
}: {
  ctx: PreviewContext;
  onCtx: (c: PreviewContext) => void;
  keys: string;
  onKeys: (k: string) => void;
}) {
  return html`<div class="row">
    <${Field} id="cfg-preview-server" label="Server id"
      ><input id="cfg-preview-server" value=${ctx.server} onInput=${(e: Event) => onCtx({ ...ctx, server: (e.currentTarget as HTMLInputElement).value })}
    /><//>
    <${Field} id="cfg-preview-map" label="Map"
      ><input id="cfg-preview-map" value=${ctx.map} onInput=${(e: Event) => onCtx({ ...ctx, map: (e.currentTarget as HTMLInputElement).value })}
    /><//>
    <${Field} id="cfg-preview-players" label="Players">
      <input
        id="cfg-preview-players"
        type="number"
        min="0"
        value=${ctx.players ?? ''}
        onInput=${(e: Event) => {
          const v = (e.currentTarget as HTMLInputElement).valueAsNumber;
          onCtx({ ...ctx, players: Number.isFinite(v) ? v : null });
        }}
      />
    <//>
    <${Field} id="cfg-preview-at" label="Time (UTC)">
      <input
        id="cfg-preview-at"
        type="datetime-local"
        value=${new Date(ctx.at).toISOString().slice(0, 16)}
        onInput=${(e: Event) => {
          const t = Date.parse(`${(e.currentTarget as HTMLInputElement).value}:00Z`);
          if (Number.isFinite(t)) onCtx({ ...ctx, at: t });
        }}
      />
    <//>
    <${Field} id="cfg-preview-keys" label="Player ids (targetingKey), comma-separated">
      <input id="cfg-preview-keys" value=${keys} onInput=${(e: Event) => onKeys((e.currentTarget as HTMLInputElement).value)} />
    <//>
  </div>`;
}
