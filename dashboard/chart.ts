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
  /** Values are money in this currency: the axis says so ($1.50, not 1.5). */
  money?: string;
}

/**
 * The top of an axis for values up to `max`: the next "nice" step (1, 2 or 5 × 10^n) above it,
 * so that the data fill the chart; 1 for an empty or all-zero series, instead of uPlot's 0–100
 * for a flat line, which read as a scale of its own.
 */
export function niceTop(max: number): number {
  if (!(max > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= max * 1.05) return step * magnitude;
  return 10 * magnitude;
}

const fmtAxisMoney = (currency: string) => {
  const f = new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase(), maximumFractionDigits: 4 });
  return (_u: uPlot, ticks: number[]) => ticks.map((t) => f.format(t));
};
/** Counts: whole numbers only (no 0.5 lines), thousands grouped. */
const fmtAxisCount = (_u: uPlot, ticks: number[]) => ticks.map((t) => (Number.isInteger(t) ? t.toLocaleString('en') : ''));

/**
 * A small uPlot line chart sized to its container. uPlot draws on canvas, so the figure has a
 * text label and the page shows the same numbers in a table beside it.
 */
export function Chart({ label, x, series, height = 220 }: { label: string; x: number[]; series: ChartSeries[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const left = series.filter((s) => !s.right);
    const right = series.filter((s) => s.right);
    const hasRight = right.length > 0;
    const top = (group: ChartSeries[]) => niceTop(Math.max(0, ...group.flatMap((s) => s.values.filter(Number.isFinite))));
    const axisValues = (group: ChartSeries[]) => (group[0]?.money ? fmtAxisMoney(group[0].money) : fmtAxisCount);
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
        { scale: 'y', values: axisValues(left), size: 60 },
        ...(hasRight ? [{ scale: 'right', side: 1 as const, grid: { show: false }, values: axisValues(right), size: 70 }] : []),
      ],
      // From zero to just above the largest value of each axis's series.
      scales: { x: { time: true }, y: { range: () => [0, top(left)] }, ...(hasRight ? { right: { range: () => [0, top(right)] as [number, number] } } : {}) },
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
  const leftTop = niceTop(Math.max(0, ...series.filter((s) => !s.right).flatMap((s) => s.values.filter(Number.isFinite))));
  return html`<figure class="chart">
    <div ref=${box} role="img" aria-label=${label} data-y-max=${leftTop}></div>
    <figcaption>${label}</figcaption>
  </figure>`;
}
