import { modeColour, type MapCharacter } from './model.js';

/**
 * Filters by mode and by squad: one checkbox per value seen so far (the mode list doubles as
 * the colour legend). A value unticked hides the characters that have it; new values come in
 * ticked.
 */

const NO_SQUAD = '(no squad)';

export class MapFilters {
  private readonly hiddenModes = new Set<string>();
  private readonly hiddenSquads = new Set<string>();
  private readonly modes = new Set<string>();
  private readonly squads = new Set<string>();
  private readonly modeBox: HTMLFieldSetElement;
  private readonly squadBox: HTMLFieldSetElement;

  constructor(
    host: HTMLElement,
    private readonly onChange: () => void,
  ) {
    this.modeBox = this.fieldset('Modes');
    this.squadBox = this.fieldset('Squads');
    host.append(this.modeBox, this.squadBox);
  }

  /** Adds checkboxes for values not seen before. */
  learn(chars: Iterable<{ mode: string; squad: string }>): void {
    const newModes: string[] = [];
    const newSquads: string[] = [];
    for (const c of chars) {
      if (!this.modes.has(c.mode)) {
        this.modes.add(c.mode);
        newModes.push(c.mode);
      }
      const squad = c.squad || NO_SQUAD;
      if (!this.squads.has(squad)) {
        this.squads.add(squad);
        newSquads.push(squad);
      }
    }
    for (const m of newModes.sort()) this.box(this.modeBox, 'mode', m, this.hiddenModes, modeColour(m));
    for (const s of newSquads.sort()) this.box(this.squadBox, 'squad', s, this.hiddenSquads, null);
    this.squadBox.hidden = this.squads.size < 2;
  }

  accepts = (c: MapCharacter): boolean => !this.hiddenModes.has(c.mode) && !this.hiddenSquads.has(c.squad || NO_SQUAD);

  private fieldset(legend: string): HTMLFieldSetElement {
    const f = document.createElement('fieldset');
    f.className = 'map-filter';
    const l = document.createElement('legend');
    l.textContent = legend;
    f.appendChild(l);
    return f;
  }

  private box(parent: HTMLFieldSetElement, kind: string, value: string, hidden: Set<string>, colour: string | null): void {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = !hidden.has(value);
    input.setAttribute(`data-${kind}`, value);
    input.addEventListener('change', () => {
      if (input.checked) hidden.delete(value);
      else hidden.add(value);
      this.onChange();
    });
    label.appendChild(input);
    if (colour) {
      const swatch = document.createElement('span');
      swatch.className = 'map-swatch';
      swatch.style.backgroundColor = colour;
      label.appendChild(swatch);
    }
    label.append(value);
    parent.appendChild(label);
  }
}
