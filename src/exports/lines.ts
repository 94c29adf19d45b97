// Export formats: JSON Lines (one list item per line) and CSV (RFC 4180 quoting).
import type { presentListItem } from '../executions/present.ts';

type Item = ReturnType<typeof presentListItem>;

export const EXPORT_COLUMNS: Array<keyof Item> = [
  'trace_id',
  'started_at',
  'agent_id',
  'provider',
  'model',
  'status',
  'tokens_in',
  'tokens_out',
  'latency_ms',
  'cost_usd',
  'cost_source',
  'has_templates',
  'template_count',
  'span_count',
  'source',
];

export function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export async function* toLines(items: AsyncIterable<Item>, format: 'csv' | 'jsonl'): AsyncGenerator<string> {
  if (format === 'csv') yield `${EXPORT_COLUMNS.join(',')}\r\n`;
  let buffer = '';
  for await (const item of items) {
    buffer += format === 'csv' ? `${EXPORT_COLUMNS.map((c) => csvField(item[c])).join(',')}\r\n` : `${JSON.stringify(item)}\n`;
    if (buffer.length >= 64 * 1024) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}

/** A report's rows as CSV (RFC 4180 quoting, CRLF): a header of `columns`, then each row's values in that order (arrays joined by spaces). */
export function tableCsv(columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>): string {
  const cell = (v: unknown) => csvField(Array.isArray(v) ? v.join(' ') : v);
  return [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].map((l) => `${l}\r\n`).join('');
}
