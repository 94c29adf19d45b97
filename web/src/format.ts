// Display formats. Instants are shown on the console's one clock (below: the viewer's time zone
// by default, or UTC), always with the zone named (ui.tsx Time, Zone); UTC days and months stay
// UTC, like the API's, and say so; money keeps its small digits (a call costs fractions of a cent)
// and the exact value is in the title.

export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const abs = Math.abs(n);
  if (abs === 0) return '$0.00';
  if (abs >= 1) return `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (abs >= 0.01) return `$${n.toFixed(4).replace(/0{1,2}$/, '')}`;
  return `$${n.toFixed(9).replace(/0+$/, '')}`;
}

export const int = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : n.toLocaleString('en-US'));

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** 2026-11-22 03:42:01, always in UTC (whatever the clock): for UTC days and hover titles. */
export function utc(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').slice(0, 19);
}

export const pct = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : `${n.toFixed(n < 10 ? 1 : 0)}%`);

/** Any JSON value as readable text: strings as they are, the rest indented. */
export function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  return JSON.stringify(v, null, 2);
}

// The console's clock: every instant is shown, and every datetime filter is read, in one zone:
// the viewer's own (default) or UTC, switched in the shell and remembered in localStorage. URLs
// and API calls keep ISO instants in UTC, so a link means the same instant in any zone.
export type Clock = 'local' | 'utc';
const CLOCK_KEY = 'traceloom.clock';
const clockListeners = new Set<() => void>();
let current: Clock = (() => {
  try {
    return localStorage.getItem(CLOCK_KEY) === 'utc' ? 'utc' : 'local';
  } catch {
    return 'local';
  }
})();

/** The zone the console shows instants in now. */
export const clock = (): Clock => current;

/** Switches the console's clock (remembered for this browser); subscribers redraw. */
export function setClock(next: Clock): void {
  if (next === current) return;
  current = next;
  try {
    if (next === 'utc') localStorage.setItem(CLOCK_KEY, 'utc');
    else localStorage.removeItem(CLOCK_KEY);
  } catch {
    // storage refused (private mode): the choice lasts until the page is reloaded
  }
  for (const l of clockListeners) l();
}

/** Calls `fn` when the clock changes; returns the unsubscribe. */
export function onClockChange(fn: () => void): () => void {
  clockListeners.add(fn);
  return () => void clockListeners.delete(fn);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** UTC+01:00, UTC-03:30, UTC+00:00: the viewer's offset at `at`. */
export function localOffset(at: Date = new Date()): string {
  const minutes = -at.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `UTC${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The zone of `c` as a label: `UTC`, or `local, UTC+01:00` (the offset now; the hover title of each Time gives its own). */
export const zoneName = (c: Clock = current, at?: Date): string => (c === 'utc' ? 'UTC' : `local, ${localOffset(at)}`);

/** An instant on the clock: 2026-11-22 04:42:01 (the zone is labelled by the caller: ui.tsx Time, Zone). */
export function instant(iso: string | null | undefined, c: Clock = current): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return c === 'utc' ? utc(iso) : local(iso);
}

/**
 * A datetime-local input's value, read on the console's clock, to an ISO instant in UTC (what URLs
 * and the API take); '' stays ''. toLocalInput is the way back, for the input's value.
 */
export function fromLocalInput(v: string, c: Clock = current): string {
  if (!v) return '';
  const full = v.length === 16 ? `${v}:00` : v;
  if (c === 'utc') return `${full}Z`;
  // A date-time without an offset is the viewer's local time (ECMAScript Date parsing).
  const d = new Date(full);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().replace('.000Z', 'Z');
}
export function toLocalInput(iso: string | null, c: Clock = current): string {
  if (!iso) return '';
  const d = new Date(/^\d+$/.test(iso) ? Number(iso) : iso);
  if (Number.isNaN(d.getTime())) return '';
  if (c === 'utc') return d.toISOString().slice(0, 16);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** An instant in the viewer's time zone, whatever the clock: 2026-11-22 04:42:01. Prefer `instant`. */
export function local(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** An exact decimal string of dollars, shown as the API sent it (never re-summed as a float). */
export const usdText = (s: string | null | undefined): string =>
  s === null || s === undefined ? '—' : s.startsWith('-') ? `−$${s.slice(1)}` : `$${s}`;

/** A CSV field (RFC 4180). */
export const csvField = (v: unknown): string => {
  const t = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
};

// ---------------------------------------------------------------------------------------------
// Statistics and differences, one way on every page (prompt comparison, run comparison, runs,
// experiments): rates as percentages, p as people read it, differences signed, intervals named.

const MINUS = '−';

/** A figure: four significant digits, no float noise, a true minus sign (0.10937499999999979 → 0.1094). */
export const figure = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : String(Number(x.toPrecision(4))).replace('-', MINUS);

/** A rate in 0..1 as a percentage with one decimal: 0.708333 → "70.8 %", 1 → "100 %". */
export const rate = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : `${(x * 100).toFixed(1).replace(/\.0$/, '').replace('-', MINUS)} %`;

/** A p-value: "< 0.0001" below that, else two significant digits (0.10937499999999979 → "0.11"). */
export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '—';
  if (p < 0.0001) return '< 0.0001';
  return String(Number(Number(p.toPrecision(10)).toPrecision(2)));
}

/** "p = 0.11" or "p < 0.0001". */
export const pText = (p: number | null | undefined): string => {
  const v = pValue(p);
  return v.startsWith('<') ? `p ${v}` : `p = ${v}`;
};

const signed = (x: number | null | undefined, f: (abs: number) => string): string => {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const abs = f(Math.abs(x));
  // A difference that shows as zero has no sign.
  if (x === 0 || /^[^1-9]*$/.test(abs)) return abs;
  return `${x < 0 ? MINUS : '+'}${abs}`;
};

/** A difference in money, the sign before the dollar: +$0.00002, −$0.0011. */
export const signedUsd = (x: number | null | undefined): string => signed(x, usd);

/** A difference of a score: +0.08, −0.012. */
export const signedFigure = (x: number | null | undefined): string => signed(x, (a) => figure(a));

/** A difference of rates (0..1) in percentage points: 0.15 → "+15 points" ("+15" without the unit, for intervals). */
export const signedPoints = (x: number | null | undefined, unit = true): string =>
  x === null || x === undefined ? '—' : `${signed(x, (a) => (a * 100).toFixed(1).replace(/\.0$/, ''))}${unit ? ' points' : ''}`;

/** A difference of durations: +36 ms, −1.26 s. */
export const signedDuration = (ms: number | null | undefined): string => signed(ms, duration);

/** A 95 % interval, saying what it is of: "95 % interval of the difference of rates: −1 to +51 points". */
export function interval(
  ci: { low: number; high: number } | null | undefined,
  f: (x: number) => string,
  of = 'the difference',
  unit = '',
): string {
  if (!ci) return `no 95 % interval of ${of} (too few values or no variation)`;
  return `95 % interval of ${of}: ${f(ci.low)} to ${f(ci.high)}${unit ? ` ${unit}` : ''}`;
}

/** Whether a 95 % interval excludes 0 (the difference is then one way or the other). */
export const excludesZero = (ci: { low: number; high: number } | null | undefined): boolean => !!ci && (ci.low > 0 || ci.high < 0);
