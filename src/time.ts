// Timestamps in bodies and query parameters: ISO 8601 or integer epoch milliseconds.
import { badRequest } from './errors.ts';

/** The earliest time a window may hold: the engine's times start at the epoch. */
export const EPOCH = '1970-01-01T00:00:00Z';

export function parseTime(value: string | number, field: string): Date {
  let ms: number;
  if (typeof value === 'number' || /^\d{1,15}$/.test(value)) ms = Number(value);
  else if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value))
    ms = Date.parse(/[T ]\d/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? `${value.replace(' ', 'T')}Z` : value);
  else ms = NaN;
  // Date.parse rolls impossible dates over ("2026-02-30" is 2026-03-02): the calendar date as
  // written must exist.
  if (typeof value === 'string' && Number.isFinite(ms) && !/^\d{1,15}$/.test(value) && !calendarDateExists(value)) ms = NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms > 32_503_680_000_000)
    throw badRequest(`${field}: must be an ISO 8601 timestamp or epoch milliseconds, got ${JSON.stringify(value)}`);
  return new Date(ms);
}

function calendarDateExists(value: string): boolean {
  const y = Number(value.slice(0, 4));
  const m = Number(value.slice(5, 7));
  const d = Number(value.slice(8, 10));
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * An optional half-open range [start, end) from query parameters, as ClickHouse time text: each
 * bound parsed as parseTime does (400 naming it), and start before end.
 */
export function timeRange(start: string | undefined, end: string | undefined): { start?: string; end?: string } {
  const from = start !== undefined ? parseTime(start, 'start') : undefined;
  const to = end !== undefined ? parseTime(end, 'end') : undefined;
  if (from && to && from >= to) throw badRequest('start: must be before end');
  return { start: from && toClickHouseTime(from), end: to && toClickHouseTime(to) };
}

/** ClickHouse DateTime64(3, 'UTC') literal. */
export function toClickHouseTime(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/** '2026-11-01 10:00:00.123' from ClickHouse → ISO 8601 with milliseconds. */
export function fromClickHouseTime(s: string): string {
  return `${s.replace(' ', 'T')}${s.includes('.') ? '' : '.000'}Z`;
}

/**
 * The start times ingest accepts (epoch ms): from INGEST_SPAN_MAX_AGE_DAYS before now to
 * INGEST_SPAN_MAX_FUTURE_DAYS after. A broken clock (a span of 1970, of 2090) is refused where it
 * arrives, and a batch of accepted rows spans so few months that it never holds more partitions
 * than one insert may create (docs/traces.md, "Start times").
 */
export interface StartWindow {
  minMs: number;
  maxMs: number;
}

const DAY_MS = 86_400_000;

export function startWindow(nowMs: number, maxAgeDays: number, maxFutureDays: number): StartWindow {
  return { minMs: nowMs - maxAgeDays * DAY_MS, maxMs: nowMs + maxFutureDays * DAY_MS };
}

/** Why a start time (epoch ms) is refused, or undefined when the window holds it. */
export function outsideStartWindow(ms: number, w: StartWindow): string | undefined {
  if (ms >= w.minMs && ms <= w.maxMs) return undefined;
  const iso = (t: number) => (Number.isFinite(t) && Math.abs(t) < 8.64e15 ? new Date(t).toISOString() : String(t));
  return `start time ${iso(ms)} is outside the accepted window, ${iso(w.minMs)} to ${iso(w.maxMs)}`;
}
