// Timestamps in bodies and query parameters: ISO 8601 or integer epoch milliseconds.
import { badRequest } from './errors.ts';

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

/** ClickHouse DateTime64(3, 'UTC') literal. */
export function toClickHouseTime(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/** '2026-11-01 10:00:00.123' from ClickHouse → ISO 8601 with milliseconds. */
export function fromClickHouseTime(s: string): string {
  return `${s.replace(' ', 'T')}${s.includes('.') ? '' : '.000'}Z`;
}
