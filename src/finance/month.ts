// A calendar month of UTC days, as finance reports name it ("2026-11").
import { badRequest } from '../errors.ts';

export interface Month {
  /** YYYY-MM */
  month: string;
  /** first and last day, YYYY-MM-DD */
  first: string;
  last: string;
  /** [start, end) as ISO 8601 (UTC midnights) */
  start: string;
  end: string;
  /** the same as ClickHouse times ('YYYY-MM-DD hh:mm:ss.sss') */
  chStart: string;
  chEnd: string;
}

export function monthOf(text: string, field = 'month'): Month {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text);
  if (!m || Number(m[1]) < 1970 || Number(m[1]) > 2999)
    throw badRequest(`${field}: a month YYYY-MM (1970-01 to 2999-12), got ${JSON.stringify(text)}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const start = new Date(Date.UTC(y, mo - 1, 1));
  const end = new Date(Date.UTC(y, mo, 1));
  const ch = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');
  return {
    month: text,
    first: start.toISOString().slice(0, 10),
    last: new Date(end.getTime() - 86_400_000).toISOString().slice(0, 10),
    start: start.toISOString(),
    end: end.toISOString(),
    chStart: ch(start),
    chEnd: ch(end),
  };
}

/** The month before the one `at` is in. */
export function previousMonth(at: Date): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return d.toISOString().slice(0, 7);
}
