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

function csvField(v: unknown): string {
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
