import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { messageOf } from './api.js';

/** Loads data on mount and when deps change; `reload` runs it again. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | undefined; error: string | null; loading: boolean; reload: () => Promise<void> } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine === seq.current) {
        setData(value);
        setError(null);
      }
    } catch (err) {
      if (mine === seq.current) setError(messageOf(err));
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/** Calls fn every ms while mounted (and not while the tab is hidden). */
export function useInterval(fn: () => void, ms: number | null): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (ms === null) return undefined;
    const t = setInterval(() => {
      if (!document.hidden) saved.current();
    }, ms);
    return () => clearInterval(t);
  }, [ms]);
}

export function ErrorBox({ error }: { error: string | null | undefined }) {
  return error ? html`<p class="error-box" role="alert">${error}</p>` : null;
}

export function Notice({ children }: { children: ComponentChildren }) {
  return html`<p class="notice" role="status">${children}</p>`;
}

interface FieldProps {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string | undefined;
  children: ComponentChildren;
}

/** A label, a control and its message; the control gets aria-describedby via describedBy(). */
export function Field({ id, label, error, hint, children }: FieldProps) {
  return html`<div class=${`field${error ? ' invalid' : ''}`}>
    <label for=${id}>${label}</label>
    ${children} ${hint ? html`<p class="hint" id=${`${id}-hint`}>${hint}</p>` : null}
    ${error ? html`<p class="field-error" id=${`${id}-error`} data-error-for=${id}>${error}</p>` : null}
  </div>`;
}

export function describedBy(id: string, error?: string, hint?: string): Record<string, string | boolean> {
  const ids = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ');
  return { 'aria-describedby': ids || undefined!, 'aria-invalid': error ? 'true' : 'false' } as Record<string, string | boolean>;
}

interface TextProps {
  id: string;
  label: string;
  value: string;
  onValue: (v: string) => void;
  error?: string | undefined;
  hint?: string | undefined;
  type?: string;
  required?: boolean;
  maxLength?: number;
  multiline?: boolean;
  autocomplete?: string;
}

export function TextField(p: TextProps) {
  const attrs = describedBy(p.id, p.error, p.hint);
  const onInput = (e: Event) => p.onValue((e.currentTarget as HTMLInputElement).value);
  return html`<${Field} id=${p.id} label=${p.label} error=${p.error} hint=${p.hint}>
    ${
      p.multiline
        ? html`<textarea id=${p.id} value=${p.value} onInput=${onInput} rows="3" maxLength=${p.maxLength} ...${attrs}></textarea>`
        : html`<input
            id=${p.id}
            type=${p.type ?? 'text'}
            value=${p.value}
            onInput=${onInput}
            required=${p.required}
            maxLength=${p.maxLength}
            autocomplete=${p.autocomplete}
            ...${attrs}
          />`
    }
  <//>`;
}

interface NumberProps {
  id: string;
  label: string;
  value: number;
  onValue: (v: number) => void;
  error?: string | undefined;
  hint?: string | undefined;
  min?: number;
  max?: number;
  step?: number | 'any';
}

export function NumberField(p: NumberProps) {
  const attrs = describedBy(p.id, p.error, p.hint);
  return html`<${Field} id=${p.id} label=${p.label} error=${p.error} hint=${p.hint}>
    <input
      id=${p.id}
      type="number"
      inputmode="decimal"
      value=${Number.isNaN(p.value) ? '' : p.value}
      min=${p.min}
      max=${p.max}
      step=${p.step ?? 1}
      onInput=${(e: Event) => p.onValue((e.currentTarget as HTMLInputElement).valueAsNumber)}
      ...${attrs}
    />
  <//>`;
}

export function Checkbox({
  id,
  label,
  checked,
  onValue,
  error,
}: {
  id: string;
  label: string;
  checked: boolean;
  onValue: (v: boolean) => void;
  error?: string | undefined;
}) {
  return html`<div class=${`check${error ? ' invalid' : ''}`}>
    <input
      id=${id}
      type="checkbox"
      checked=${checked}
      onChange=${(e: Event) => onValue((e.currentTarget as HTMLInputElement).checked)}
      ...${describedBy(id, error)}
    />
    <label for=${id}>${label}</label>
    ${error ? html`<p class="field-error" id=${`${id}-error`} data-error-for=${id}>${error}</p>` : null}
  </div>`;
}

export function Tabs({ items, label }: { items: { href: string; label: string; current: boolean }[]; label: string }) {
  return html`<nav class="tabs" aria-label=${label}>
    ${items.map((t) => html`<a href=${t.href} class=${t.current ? 'tab current' : 'tab'} aria-current=${t.current ? 'page' : undefined}>${t.label}</a>`)}
  </nav>`;
}

/** A secret shown once, with a copy button. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      // Clipboard refused (insecure origin): the value is selectable text, so the user can copy it by hand.
      setCopied(false);
    }
  };
  return html`<div class="shown-once" role="status">
    <p><strong>${label}</strong> — shown only now; store it safely.</p>
    <div class="row"><code class="secret" data-secret>${value}</code> <button type="button" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button></div>
  </div>`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The browser's own time zone, named as people read it (CET, GMT+1), once per page. */
const ZONE = (() => {
  try {
    const part = new Intl.DateTimeFormat('en', { timeZoneName: 'short' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName');
    return part?.value ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return 'local time';
  }
})();

/**
 * One date-time format across the dashboard: ISO-like (`2026-11-28 14:18:57`) in the viewer's
 * own time zone, which is named after it. Days (per-day rows, billing periods) stay plain
 * `YYYY-MM-DD` dates.
 */
export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${ZONE}`;
}

/** A calendar day (`YYYY-MM-DD`) of an ISO time, as the server counts days: UTC. */
export function fmtDay(iso: string): string {
  return iso.slice(0, 10);
}

/** A period the server gives as [start, end): its first and last day, `2026-11-01 – 2026-11-30` (UTC days). */
export function fmtPeriod(start: string, end: string): string {
  const last = new Date(Date.parse(end) - 1);
  return `${fmtDay(start)} – ${Number.isNaN(last.getTime()) ? fmtDay(end) : last.toISOString().slice(0, 10)}`;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

/**
 * An amount of money in its currency (the billing catalogue's; spend is counted in USD): two
 * decimals from one unit up; below that up to four, without trailing zeros past two, so that
 * $0.0125 reads as itself, $0.5 as $0.50 and nothing as $0.00.
 */
export function fmtMoney(n: number, currency = 'USD'): string {
  const code = currency.toUpperCase();
  const small = Math.abs(n) < 1;
  const key = `${code}:${small}`;
  let f = moneyFormats.get(key);
  if (!f) {
    const digits = { minimumFractionDigits: 2, maximumFractionDigits: small ? 4 : 2 };
    try {
      f = new Intl.NumberFormat('en', { style: 'currency', currency: code, ...digits });
    } catch {
      f = new Intl.NumberFormat('en', digits);
    }
    moneyFormats.set(key, f);
  }
  return f.format(n);
}

export function fmtPct(n: number): string {
  return `${(n * 100).toFixed(1)} %`;
}
