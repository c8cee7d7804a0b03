import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, messageOf } from '../api.js';
import { ErrorBox, fmtTime, useInterval } from '../ui.js';
import { LiveMap, type LiveSample } from '../map/live.js';

/** How often the page asks for the latest sample until the server says how often one can come (its minIntervalS). */
const FIRST_POLL_MS = 5_000;

/** The server's characters on a map, from the sampled roster with positions its sidecar sends with telemetry. */
export function MapTab({ id }: { id: string }) {
  const mapHost = useRef<HTMLDivElement>(null);
  const filtersHost = useRef<HTMLDivElement>(null);
  const panelHost = useRef<HTMLDivElement>(null);
  const live = useRef<LiveMap | null>(null);
  const [sample, setSample] = useState<LiveSample | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async (): Promise<void> => {
    try {
      const s = await call<LiveSample>('GET', `/v1/servers/${encodeURIComponent(id)}/map`);
      setSample(s);
      setError(null);
      live.current?.update(s);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  useEffect(() => {
    live.current = new LiveMap(mapHost.current!, filtersHost.current!, panelHost.current!, `Live map of server ${id}`);
    void load();
    return () => {
      live.current?.dispose();
      mapHost.current?.replaceChildren();
      filtersHost.current?.replaceChildren();
      panelHost.current?.replaceChildren();
      live.current = null;
    };
  }, [id]);
  useInterval(() => void load(), sample ? sample.minIntervalS * 1000 : FIRST_POLL_MS);

  const n = sample?.characters.length ?? 0;
  return html`<div>
    <h2>Live map</h2>
    <${ErrorBox} error=${error} />
    ${sample && sample.ts === null ? html`<p class="empty">No map sample yet: it comes with the sidecar's telemetry reports (at most one every ${sample.minIntervalS} s).</p>` : null}
    ${sample?.stale && sample.ts !== null ? html`<p class="notice warn" role="status">The sidecar has not sent a sample for a while: this is where the characters were at ${fmtTime(sample.ts)}.</p>` : null}
    ${sample && sample.ts !== null ? html`<p class="hint" data-map-status>${n} character${n === 1 ? '' : 's'} at ${fmtTime(sample.ts)}. Drag to pan, wheel or + / − to zoom; click a character.</p>` : null}
    <div class="live-map">
      <div class="live-map-canvas" ref=${mapHost}></div>
      <aside class="live-map-side" aria-label="Selected character and filters">
        <div ref=${filtersHost}></div>
        <section ref=${panelHost} aria-live="polite"></section>
      </aside>
    </div>
  </div>`;
}
