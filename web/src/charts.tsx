// Charts: a daily cost bar chart and the explorer's stacked cost over time (uPlot, canvas), and
// the budget gauge (SVG).
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { clock, instant, pct, usd, zoneName, type Clock } from './format.ts';
import { useClock } from './ui.tsx';
import type { DailyCost } from './types.ts';

/** A colour of the theme (light or dark, styles.css), for the canvas. */
const cssVar = (name: string, fallback: string): string =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

/** Whether the page is dark now: a canvas is redrawn in the theme's colours when it changes. */
function useDark(): boolean {
  const query = matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const change = () => setDark(query.matches);
    query.addEventListener('change', change);
    return () => query.removeEventListener('change', change);
  }, []);
  return dark;
}

/** Cost per UTC day, every day of the window (the API includes the zero days). */
export function DailyCostChart({ days, height = 220 }: { days: DailyCost[]; height?: number }) {
  const el = useRef<HTMLDivElement>(null);
  const dark = useDark();
  useEffect(() => {
    const root = el.current;
    if (!root) return;
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const costs = days.map((d) => d.cost);
    const runs = days.map((d) => d.executions);
    const bars = uPlot.paths.bars!({ size: [0.7, 40], align: 0 });
    const muted = cssVar('--muted', '#5b6475');
    const plot = new uPlot(
      {
        width: Math.max(root.clientWidth, 300),
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        legend: { show: true, live: true },
        scales: {
          x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
          usd: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          {
            stroke: muted,
            grid: { show: false },
            values: (_u, ticks) => ticks.map((t) => new Date(t * 1000).toISOString().slice(5, 10)),
          },
          {
            scale: 'usd',
            stroke: muted,
            size: 84,
            grid: { stroke: cssVar('--chart-grid', '#eef0f4') },
            values: (_u, ticks) => ticks.map((t) => usd(t)),
          },
        ],
        series: [
          { label: 'Day (UTC)', value: (_u, v) => (v === null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
          {
            label: 'Cost',
            scale: 'usd',
            fill: '#4f6bed',
            stroke: '#3d56c9',
            paths: bars,
            points: { show: false },
            value: (_u, v) => usd(v),
          },
          {
            label: 'Executions',
            scale: 'runs',
            show: true,
            stroke: 'transparent',
            paths: () => null,
            points: { show: false },
            value: (_u, v) => (v === null ? '—' : String(v)),
          },
        ],
      },
      [xs, costs, runs],
      root,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(root.clientWidth, 300), height }));
    resize.observe(root);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, height, dark]);
  return <div class="chart" ref={el} data-days={days.length} />;
}

const PALETTE = ['#4f6bed', '#e8833a', '#2fa67a', '#c94c7c', '#8a63d2', '#d4b13a', '#3aa8c9', '#7a8699', '#b5533c'];

export interface StackedSeries {
  label: string;
  /** cost per bucket, in the order of `buckets` (a float: drawing only; the table shows the exact text) */
  values: number[];
}

export type Granularity = 'hour' | 'day' | 'week' | 'month';

/**
 * A bucket's start as its axis label: days, weeks and months are the API's UTC ones; an hour is read
 * on the console's clock. The label follows the bucket's size.
 */
export function bucketLabel(granularity: Granularity, seconds: number, zone: Clock = clock()): string {
  if (granularity === 'hour') {
    const at = instant(new Date(seconds * 1000).toISOString(), zone);
    return `${at.slice(5, 10)} ${at.slice(11, 13)}:00`;
  }
  const iso = new Date(seconds * 1000).toISOString();
  if (granularity === 'month') return iso.slice(0, 7);
  return iso.slice(5, 10);
}

const NOMINAL_STEP_S: Record<Granularity, number> = { hour: 3600, day: 86_400, week: 604_800, month: 2_678_400 };
/** Room for one axis label, in CSS pixels. */
const LABEL_PX: Record<Granularity, number> = { hour: 92, day: 56, week: 56, month: 64 };

/**
 * Cost per time bucket, one stacked bar segment per group (top groups, then the rest). The x axis
 * ticks are the buckets themselves (every k-th when they would overlap), labelled by the bucket's
 * granularity — a day bucket reads 11-27, never an hour — and the scale reaches half a bucket past
 * the first and the last, so no bar is cut. Hours are drawn on the console's clock; days, weeks and
 * months (the API's UTC buckets) in UTC.
 */
export function StackedTimeChart({
  buckets,
  series,
  granularity,
  height = 260,
}: {
  buckets: number[];
  series: StackedSeries[];
  granularity: Granularity;
  height?: number;
}) {
  const el = useRef<HTMLDivElement>(null);
  const dark = useDark();
  const zone = useClock();
  useEffect(() => {
    const root = el.current;
    if (!root || buckets.length === 0) return;
    const stacked: number[][] = [];
    let below = buckets.map(() => 0);
    for (const s of series) {
      below = below.map((b, i) => b + (s.values[i] ?? 0));
      stacked.push(below);
    }
    const muted = cssVar('--muted', '#5b6475');
    const stackedBars = uPlot.paths.bars!({ size: [0.8, 48], align: 0 });
    const gaps = buckets.slice(1).map((b, i) => b - buckets[i]!);
    const step = gaps.length ? Math.min(...gaps) : NOMINAL_STEP_S[granularity];
    const ticks = (width: number) => {
      const fit = Math.max(1, Math.floor(width / LABEL_PX[granularity]));
      const stride = Math.max(1, Math.ceil(buckets.length / fit));
      return buckets.filter((_, i) => i % stride === 0);
    };
    const plot = new uPlot(
      {
        width: Math.max(root.clientWidth, 300),
        height,
        ...(granularity !== 'hour' || zone === 'utc' ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') } : {}),
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        legend: { show: true, live: true },
        scales: {
          x: {
            time: true,
            range: () => {
              const range: [number, number] = [buckets[0]! - step / 2, buckets[buckets.length - 1]! + step / 2];
              root.dataset.range = range.join(',');
              return range;
            },
          },
          usd: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          {
            stroke: muted,
            grid: { show: false },
            splits: (u) => ticks(u.bbox.width / devicePixelRatio),
            values: (_u, splits) => {
              const labels = splits.map((t) => bucketLabel(granularity, t));
              root.dataset.ticks = labels.join(',');
              return labels;
            },
          },
          {
            scale: 'usd',
            stroke: muted,
            size: 84,
            grid: { stroke: cssVar('--chart-grid', '#eef0f4') },
            values: (_u, t) => t.map((v) => usd(v)),
          },
        ],
        // Drawn top-down so each area covers the ones below it.
        series: [
          {
            label: `${granularity[0]!.toUpperCase()}${granularity.slice(1)} (${granularity === 'hour' ? zoneName(zone) : 'UTC'})`,
            value: (_u, v) => (v === null ? '—' : bucketLabel(granularity, v, zone)),
          },
          ...[...series.keys()].reverse().map((i) => ({
            label: series[i]!.label,
            scale: 'usd',
            stroke: PALETTE[i % PALETTE.length],
            fill: `${PALETTE[i % PALETTE.length]}cc`,
            paths: stackedBars,
            points: { show: false },
            value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) =>
              idx === null ? '—' : usd(series[i]!.values[idx] ?? 0),
          })),
        ],
      },
      [buckets, ...stacked.reverse()],
      root,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(root.clientWidth, 300), height }));
    resize.observe(root);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [buckets, series, granularity, height, dark, zone]);
  return <div class="chart stacked" ref={el} data-series={series.length} data-buckets={buckets.length} data-granularity={granularity} />;
}

/**
 * Month-to-date spend against the budget: an arc filled to pct_used (capped at the end), a tick at
 * the alert threshold, coloured by status.
 */
export function BudgetGauge({
  pctUsed,
  threshold,
  status,
  spent,
  budget,
}: {
  pctUsed: number;
  threshold: number;
  status: string;
  spent: number;
  budget: number;
}) {
  const r = 80;
  const cx = 100;
  const cy = 95;
  const point = (p: number) => {
    const a = Math.PI * (1 - Math.min(Math.max(p, 0), 100) / 100);
    return [cx + r * Math.cos(a), cy - r * Math.sin(a)] as const;
  };
  const arc = (p: number) => {
    const [x, y] = point(p);
    return `M ${cx - r} ${cy} A ${r} ${r} 0 0 1 ${x.toFixed(2)} ${y.toFixed(2)}`;
  };
  const [tx1, ty1] = point(threshold);
  const inner = (p: number) => {
    const a = Math.PI * (1 - p / 100);
    return [cx + (r - 16) * Math.cos(a), cy - (r - 16) * Math.sin(a)] as const;
  };
  const [tx2, ty2] = inner(threshold);
  return (
    <svg
      class={`gauge status-${status}`}
      viewBox="0 0 200 120"
      role="img"
      aria-label={`${pct(pctUsed)} of the monthly budget used; alert at ${threshold}%`}
      data-pct={pctUsed}
    >
      <path d={arc(100)} class="gauge-track" />
      {pctUsed > 0 && <path d={arc(pctUsed)} class="gauge-fill" />}
      <line x1={tx1} y1={ty1} x2={tx2} y2={ty2} class="gauge-threshold" />
      <text x={cx} y={cy - 18} class="gauge-pct">
        {pct(pctUsed)}
      </text>
      <text x={cx} y={cy} class="gauge-sub">
        {usd(spent)} of {usd(budget)}
      </text>
    </svg>
  );
}
