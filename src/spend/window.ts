// Time windows of spend reads. Daily spend is kept per UTC day, so a window is whole UTC days:
// `start` is floored to its day's 00:00 UTC and `end` (exclusive) raised to the next 00:00 UTC
// unless it is one already. The answer names the window it used (`start`, `end`).
import { badRequest } from '../errors.ts';
import { EPOCH, parseTime } from '../time.ts';

const DAY_MS = 86_400_000;
export const MAX_WINDOW_DAYS = 3_660;
export const DEFAULT_WINDOW_DAYS = 30;

export interface DayWindow {
  /** 00:00 UTC of the first day */
  start: Date;
  /** 00:00 UTC after the last day (exclusive) */
  end: Date;
  /** 'YYYY-MM-DD' of every day in the window, in order */
  days: string[];
}

export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);
const floorDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const ceilDay = (ms: number) => Math.ceil(ms / DAY_MS) * DAY_MS;

/** The window of `start`/`end` query values; default: the last 30 UTC days, today included. */
export function dayWindow(q: { start?: string; end?: string }, now: Date): DayWindow {
  const endRaw = q.end !== undefined ? parseTime(q.end, 'end') : undefined;
  const startRaw = q.start !== undefined ? parseTime(q.start, 'start') : undefined;
  if (startRaw && endRaw && startRaw >= endRaw) throw badRequest('start: must be before end');
  const end = endRaw ? ceilDay(endRaw.getTime()) : floorDay(now.getTime()) + DAY_MS;
  if (end <= 0) throw badRequest(`end: must be after ${EPOCH}, got ${JSON.stringify(q.end)}`);
  // A window never reaches before the epoch (the engine's dates start there).
  const start = startRaw ? floorDay(startRaw.getTime()) : Math.max(0, end - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (start >= end) throw badRequest('start: must be before end');
  const n = (end - start) / DAY_MS;
  if (n > MAX_WINDOW_DAYS) throw badRequest(`end: the window spans ${n} days; at most ${MAX_WINDOW_DAYS} are allowed`);
  const days: string[] = [];
  for (let t = start; t < end; t += DAY_MS) days.push(dayOf(new Date(t)));
  return { start: new Date(start), end: new Date(end), days };
}

/** 'YYYY-MM' of a date's UTC calendar month. */
export const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

/** 00:00 UTC of the first day of a date's month, and of the next month. */
export function monthBounds(d: Date): { start: Date; next: Date } {
  return {
    start: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)),
    next: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)),
  };
}
