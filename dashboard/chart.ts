import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { html } from './html.js';

export interface ChartSeries {
  label: string;
  values: number[];
  color: string;
  /** Draw on a second y axis on the right (a different unit, e.g. USD beside counts). */
  right?: boolean;
  bars?: boolean;
}

/**
 * A small uPlot line chart sized to its container. uPlot draws on canvas, so the figure has a
 * text label and the page shows the same numbers in a table beside it.
 */
export function Chart({ label, x, series, height = 220 }: { label: string; x: number[]; series: ChartSeries[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const hasRight = series.some((s) => s.right);
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          scale: s.right ? 'right' : 'y',
          ...(s.bars ? { fill: `${s.color}55`, paths: uPlot.paths.bars!({ size: [0.6, 40] }) } : {}),
        })),
      ],
      // One tick per day, labelled MM-DD (UTC), instead of uPlot's hour ticks.
      axes: [
        { splits: () => x, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => new Date(t * 1000).toISOString().slice(5, 10)) },
        { scale: 'y' },
        ...(hasRight ? [{ scale: 'right', side: 1 as const, grid: { show: false } }] : []),
      ],
      scales: { x: { time: true } },
      legend: { live: false },
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)], el);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [JSON.stringify([x, series]), height]);
  return html`<figure class="chart">
    <div ref=${box} role="img" aria-label=${label}></div>
    <figcaption>${label}</figcaption>
  </figure>`;
}
