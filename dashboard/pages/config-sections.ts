import { html } from '../html.js';
import { ECONOMIES, POLICY_KEYS, TRAIT_NAMES, type ConfigBundle } from '../bundle.js';
import { DialogueStatus } from './dialogue-status.js';
import { Checkbox, Field, NumberField, TextField, describedBy } from '../ui.js';

/** The editor's sections share the draft, the error at a path, and the one way to change the draft. */
export interface SectionProps {
  draft: ConfigBundle;
  err: (path: string) => string | undefined;
  edit: (fn: (d: ConfigBundle) => void) => void;
}

export const idOf = (path: string) => `cfg-${path.replace(/[.[\]]+/g, '-').replace(/-$/, '')}`;
const label = (key: string) =>
  key
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/^Llm/, 'LLM')
    .replace(/^Afk/, 'AFK');

/** The dialogue line under the switches asks the server (by id) where the sidecar's lines come from. */
export function PolicySection({ serverId, draft, err, edit }: SectionProps & { serverId: string }) {
  return html`<fieldset>
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
    <${DialogueStatus} serverId=${serverId} on=${draft.policy.llm_dialogue !== false} />
  </fieldset>`;
}

export function PopulationSection({ draft, err, edit }: SectionProps) {
  const pop = draft.population;
  return html`<fieldset>
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
  </fieldset>`;
}

export function SpeechSection({ draft, err, edit }: SectionProps) {
  const lim = draft.speech.limits;
  const pc = draft.speech.phrase_cache;
  return html`<fieldset>
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
  </fieldset>`;
}

/** One theme of the flavor: its text, its weight, and a way to remove it. */
function ThemeItem({ theme: t, i, err, edit }: { theme: ConfigBundle['flavor']['themes'][number]; i: number } & Pick<SectionProps, 'err' | 'edit'>) {
  return html`<li class="theme">
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
  </li>`;
}

export function FlavorSection({ draft, err, edit }: SectionProps) {
  const f = draft.flavor;
  return html`<fieldset>
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
      ${f.themes.map((t, i) => html`<${ThemeItem} theme=${t} i=${i} err=${err} edit=${edit} />`)}
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
  </fieldset>`;
}

/** The head's framing comes back when "custom" is picked again, so switching back and forth loses nothing published. */
export function GameSection({ draft, head, err, edit }: SectionProps & { head: ConfigBundle }) {
  return html`<fieldset>
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
  </fieldset>`;
}
