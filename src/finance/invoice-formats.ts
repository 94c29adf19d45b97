// Reading a provider's usage/cost export into invoice lines (docs/spend.md, "Invoices and
// reconciliation": which columns and fields are read). Three formats, each as JSON or CSV:
// - OpenAI: the Costs API page (`GET /v1/organization/costs`: data[] buckets with start_time and
//   results[] of amount {value, currency}, line_item, project_id), and the dashboard's cost CSV
//   (start_time, start_time_iso, amount_value, amount_currency, line_item, project_id, ...);
// - Anthropic: the Admin API cost report (`GET /v1/organizations/cost_report`: data[] buckets with
//   starting_at and results[] of amount in cents as a decimal string, currency, model, cost_type,
//   token_type, description, workspace_id), and a CSV of the same fields;
// - generic: a CSV (or a JSON array of objects) of date, model, cost (USD), optionally provider,
//   currency, description.
// Lenient about what varies (header spelling, extra columns, a page or an array of pages, numbers
// or strings), strict about what a line means: a line that cannot be read is a 400 naming its line
// (or JSON path) and field. Amounts stay exact decimal text: JSON numbers are read from their text,
// never through a binary float.
import { badRequest } from '../errors.ts';

export type InvoiceFormat = 'openai' | 'anthropic' | 'generic';

export interface InvoiceLine {
  /** UTC day, YYYY-MM-DD */
  day: string;
  provider: string;
  /** as the file names it ('' when the file is not broken down by model) */
  model: string;
  /** USD, exact decimal text as given (cents shifted exactly for Anthropic) */
  costUsd: string;
  /** where it came from: "line 14" or "data[3].results[2]" */
  ref: string;
  description: string;
}

export interface ParsedInvoice {
  format: InvoiceFormat;
  provider: string;
  lines: InvoiceLine[];
  /** lines without an amount (OpenAI's CSV has a row for each day, empty when nothing was spent) or of another provider project */
  skipped: number;
}

export interface ParseHints {
  format?: InvoiceFormat;
  provider?: string;
  /** keep only the lines of this provider-side project (OpenAI project_id, Anthropic workspace_id) */
  providerProject?: string;
}

const MAX_LINES = 1_000_000;
const MAX_DIGITS = 40;

/** "1.5e-7", "-0.25", "12" → plain decimal text ("0.00000015"); undefined when it is no number. */
export function plainDecimal(text: string): string | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,3}))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const [, sign, int = '', frac = '', exp = '0'] = m;
  let digits = int + frac;
  let point = int.length + Number(exp);
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits = digits.padEnd(point, '0');
  const whole = digits.slice(0, point).replace(/^0+(?=\d)/, '') || '0';
  const decimals = digits.slice(point).replace(/0+$/, '');
  if (whole.length + decimals.length > MAX_DIGITS) return undefined;
  const body = decimals ? `${whole}.${decimals}` : whole;
  return sign === '-' && /[1-9]/.test(body) ? `-${body}` : body;
}

/** Cents (Anthropic's lowest currency unit) → dollars, exactly: the point moves two places. */
export function centsToDollars(cents: string): string {
  const neg = cents.startsWith('-');
  const [whole = '0', frac = ''] = (neg ? cents.slice(1) : cents).split('.');
  const padded = whole.padStart(3, '0');
  const out = plainDecimal(`${padded.slice(0, -2)}.${padded.slice(-2)}${frac}`)!;
  return neg && out !== '0' ? `-${out}` : out;
}

const isDay = (s: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
};

/** A day of the file: YYYY-MM-DD, an ISO 8601 time (its UTC day), or Unix seconds (or milliseconds). */
export function dayOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = String(value).trim();
  let ms: number;
  if (isDay(s)) ms = Date.parse(`${s}T00:00:00Z`);
  else if (/^\d{9,11}$/.test(s)) ms = Number(s) * 1000;
  else if (/^\d{12,14}$/.test(s)) ms = Number(s);
  else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(s)) {
    const iso = s.replace(' ', 'T');
    ms = Date.parse(/(?:Z|[+-]\d{2}:?\d{2})$/i.test(iso) ? iso : `${iso}Z`);
  } else return undefined;
  if (!Number.isFinite(ms)) return undefined;
  const day = new Date(ms).toISOString().slice(0, 10);
  return day >= '2000-01-01' && day < '2100-01-01' ? day : undefined;
}

/** JSON whose numbers become their text (so 0.1 stays "0.1" and 19 digits stay 19 digits). */
export function parseJsonExact(text: string): unknown {
  try {
    JSON.parse(text); // the error, with its position in the file as sent
  } catch (err) {
    throw badRequest(`invoice: not valid JSON: ${(err as Error).message}`);
  }
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92 /* \ */) i++;
      i++;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < text.length && /[0-9eE+\-.]/.test(text[j]!)) j++;
      out += `${text.slice(last, i)}"${text.slice(i, j)}"`;
      last = i = j;
    } else i++;
  }
  return JSON.parse(out + text.slice(last));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (v === null || v === undefined ? '' : String(v).trim());

function amountOf(raw: unknown, where: string, field: string): string {
  const d = typeof raw === 'string' ? plainDecimal(raw) : undefined;
  if (d === undefined) throw badRequest(`invoice ${where}, ${field}: not a decimal amount: ${JSON.stringify(raw)?.slice(0, 60)}`);
  return d;
}

function usd(currency: unknown, where: string, field: string): void {
  const c = text(currency).toLowerCase();
  if (c && c !== 'usd')
    throw badRequest(`invoice ${where}, ${field}: only USD is read, got ${JSON.stringify(text(currency).slice(0, 20))}`);
}

function requireDay(raw: unknown, where: string, field: string): string {
  const day = dayOf(raw);
  if (!day)
    throw badRequest(
      `invoice ${where}, ${field}: not a day (YYYY-MM-DD, an ISO 8601 time or Unix seconds, 2000 to 2099): ${JSON.stringify(text(raw).slice(0, 40))}`,
    );
  return day;
}

/** OpenAI's line_item: "gpt-4o-2024-08-06, input" → its model; other items ("Image models") as they are. */
function openAiModel(lineItem: string): string {
  const comma = lineItem.indexOf(', ');
  return comma > 0 ? lineItem.slice(0, comma) : lineItem;
}

/** Pages: one page object, an array of pages, or the buckets themselves. */
function bucketsOf(root: unknown): Array<{ bucket: Record<string, unknown>; where: string }> {
  const pages = Array.isArray(root) && root.every((p) => isObject(p) && Array.isArray(p.data)) ? root : [root];
  const out: Array<{ bucket: Record<string, unknown>; where: string }> = [];
  pages.forEach((page, p) => {
    const prefix = pages.length > 1 ? `[${p}].` : '';
    const data = isObject(page) && Array.isArray(page.data) ? page.data : Array.isArray(page) ? page : undefined;
    if (!data) throw badRequest(`invoice ${prefix || ''}data: a cost export has a "data" array of time buckets`);
    data.forEach((bucket, b) => {
      const where = `${prefix}data[${b}]`;
      if (!isObject(bucket) || !Array.isArray(bucket.results)) throw badRequest(`invoice ${where}: a time bucket has a "results" array`);
      out.push({ bucket, where });
    });
  });
  return out;
}

function fromOpenAiJson(root: unknown, hints: ParseHints): ParsedInvoice {
  const lines: InvoiceLine[] = [];
  let skipped = 0;
  for (const { bucket, where } of bucketsOf(root)) {
    const day = requireDay(bucket.start_time ?? bucket.start_time_iso, where, 'start_time');
    (bucket.results as unknown[]).forEach((r, i) => {
      const at = `${where}.results[${i}]`;
      if (!isObject(r)) throw badRequest(`invoice ${at}: a result is an object`);
      if (hints.providerProject && text(r.project_id) !== hints.providerProject) return void skipped++;
      const amount = isObject(r.amount) ? r.amount : undefined;
      if (!amount) throw badRequest(`invoice ${at}, amount: an object {value, currency}`);
      if (amount.value === null || amount.value === undefined) return void skipped++;
      usd(amount.currency, at, 'amount.currency');
      const lineItem = text(r.line_item);
      lines.push({
        day,
        provider: 'openai',
        model: openAiModel(lineItem),
        costUsd: amountOf(amount.value, at, 'amount.value'),
        ref: at,
        description: lineItem,
      });
    });
  }
  return { format: 'openai', provider: 'openai', lines, skipped };
}

function fromAnthropicJson(root: unknown, hints: ParseHints): ParsedInvoice {
  const lines: InvoiceLine[] = [];
  let skipped = 0;
  for (const { bucket, where } of bucketsOf(root)) {
    const day = requireDay(bucket.starting_at, where, 'starting_at');
    (bucket.results as unknown[]).forEach((r, i) => {
      const at = `${where}.results[${i}]`;
      if (!isObject(r)) throw badRequest(`invoice ${at}: a result is an object`);
      if (hints.providerProject && text(r.workspace_id) !== hints.providerProject) return void skipped++;
      if (r.amount === null || r.amount === undefined) return void skipped++;
      usd(r.currency, at, 'currency');
      lines.push({
        day,
        provider: 'anthropic',
        model: anthropicModel(r),
        costUsd: centsToDollars(amountOf(r.amount, at, 'amount')),
        ref: at,
        description: describe(r),
      });
    });
  }
  return { format: 'anthropic', provider: 'anthropic', lines, skipped };
}

/** A cost without a model (web search, code execution) is billed apart: "(web_search)". */
function anthropicModel(r: Record<string, unknown>): string {
  const model = text(r.model);
  if (model) return model;
  const type = text(r.cost_type);
  return type && type !== 'tokens' ? `(${type})` : '';
}

const describe = (r: Record<string, unknown>) =>
  [text(r.description), text(r.cost_type), text(r.token_type), text(r.service_tier), text(r.context_window)]
    .filter(Boolean)
    .join(' · ')
    .slice(0, 500);

/** A header name as compared: lower case, spaces and dashes as underscores, no BOM. */
const headerName = (h: string) =>
  h
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

const COLUMNS = {
  day: ['date', 'day', 'usage_date_utc', 'usage_date', 'start_time_iso', 'start_time', 'starting_at', 'bucket_start', 'timestamp'],
  model: ['model', 'model_name', 'model_id', 'model_version'],
  lineItem: ['line_item'],
  dollars: ['cost_usd', 'amount_usd', 'amount_value', 'cost', 'total_cost', 'cost_in_usd', 'usd'],
  amount: ['amount'],
  currency: ['currency', 'amount_currency'],
  provider: ['provider'],
  project: ['project_id', 'workspace_id'],
  description: ['description'],
  costType: ['cost_type'],
  tokenType: ['token_type'],
} as const;

type Column = keyof typeof COLUMNS;

/** Rows of a CSV file or of a JSON array of objects, by column name, with where each came from. */
export interface TableRows {
  header: string[];
  rows: Array<{ values: Record<string, string>; where: string }>;
}

function detectTable(header: string[]): InvoiceFormat {
  const has = (names: readonly string[]) => names.some((n) => header.includes(n));
  if (has(['amount_value', 'line_item'])) return 'openai';
  if (has(['token_type', 'cost_type', 'workspace_id', 'context_window', 'service_tier', 'usage_date_utc'])) return 'anthropic';
  return 'generic';
}

function fromTable(t: TableRows, hints: ParseHints): ParsedInvoice {
  const header = t.header.map(headerName);
  const format = hints.format ?? detectTable(header);
  const col = (c: Column) => COLUMNS[c].find((n) => header.includes(n));
  const dayCol = col('day');
  if (!dayCol) throw badRequest(`invoice header: no date column (one of ${COLUMNS.day.join(', ')})`);
  const modelCol = col('model') ?? col('lineItem');
  if (!modelCol && format === 'generic') throw badRequest(`invoice header: no model column (one of ${COLUMNS.model.join(', ')})`);
  // Anthropic's amount is in cents (as its API); a dollar column wins where both are given.
  const dollarCol = col('dollars') ?? (format !== 'anthropic' ? col('amount') : undefined);
  const centsCol = dollarCol ? undefined : col('amount');
  if (!dollarCol && !centsCol)
    throw badRequest(`invoice header: no cost column (one of ${[...COLUMNS.dollars, ...COLUMNS.amount].join(', ')})`);
  const [currencyCol, providerCol, projectCol, descriptionCol, costTypeCol, tokenTypeCol] = (
    ['currency', 'provider', 'project', 'description', 'costType', 'tokenType'] as const
  ).map(col);
  const lines: InvoiceLine[] = [];
  let skipped = 0;
  const defaultProvider = format === 'generic' ? (hints.provider ?? '') : format;
  for (const { values, where } of t.rows) {
    const get = (c: string | undefined) => (c ? (values[c] ?? '').trim() : '');
    if (hints.providerProject && projectCol && get(projectCol) !== hints.providerProject) {
      skipped++;
      continue;
    }
    const rawAmount = get(dollarCol ?? centsCol);
    if (rawAmount === '') {
      skipped++;
      continue;
    }
    // A dollar sign is accepted ("$1.20", "-$0.5"); thousands separators are not: "1,000" is refused, never guessed.
    const amount = plainDecimal(rawAmount.replace(/^([+-]?)\$/, '$1'));
    if (amount === undefined)
      throw badRequest(
        `invoice ${where}, column "${dollarCol ?? centsCol}": not a decimal amount: ${JSON.stringify(rawAmount.slice(0, 40))}`,
      );
    if (currencyCol) usd(get(currencyCol), where, `column "${currencyCol}"`);
    const day = requireDay(get(dayCol), where, `column "${dayCol}"`);
    let model = get(modelCol);
    if (modelCol === 'line_item') model = openAiModel(model);
    if (!model && format === 'anthropic') model = anthropicModel({ cost_type: get(costTypeCol) });
    if (!model && format === 'generic') throw badRequest(`invoice ${where}, column "${modelCol}": empty`);
    if (model.length > 256) throw badRequest(`invoice ${where}, column "${modelCol}": longer than 256 characters`);
    const provider = get(providerCol) || defaultProvider;
    if (provider.length > 256) throw badRequest(`invoice ${where}, column "${providerCol}": longer than 256 characters`);
    lines.push({
      day,
      provider: provider.toLowerCase(),
      model,
      costUsd: centsCol ? centsToDollars(amount) : amount,
      ref: where,
      description: [get(modelCol === 'line_item' ? modelCol : undefined), get(descriptionCol), get(costTypeCol), get(tokenTypeCol)]
        .filter(Boolean)
        .join(' · ')
        .slice(0, 500),
    });
  }
  const providers = new Set(lines.map((l) => l.provider));
  const provider = format === 'generic' ? (hints.provider ?? (providers.size === 1 ? [...providers][0]! : '')) : format;
  return { format, provider, lines, skipped };
}

/** A JSON document: a provider's cost page(s), or an array of flat objects read as a table. */
function fromJson(root: unknown, hints: ParseHints): ParsedInvoice {
  if (Array.isArray(root) && root.length > 0 && root.every((r) => isObject(r) && !Array.isArray(r.data) && !Array.isArray(r.results))) {
    const header = [...new Set(root.flatMap((r) => Object.keys(r as object)))];
    return fromTable(
      {
        header,
        rows: root.map((r, i) => ({
          values: Object.fromEntries(Object.entries(r as object).map(([k, v]) => [headerName(k), isObject(v) ? '' : text(v)])),
          where: `[${i}]`,
        })),
      },
      hints,
    );
  }
  const buckets = bucketsOf(root);
  const first = buckets.flatMap(({ bucket }) => bucket.results as unknown[]).find(isObject);
  const format =
    hints.format ??
    (first && isObject(first.amount) ? 'openai' : buckets.some(({ bucket }) => 'starting_at' in bucket) ? 'anthropic' : 'openai');
  if (format === 'generic') throw badRequest('invoice: a generic invoice is a CSV or a JSON array of {date, model, cost}');
  return format === 'openai' ? fromOpenAiJson(root, hints) : fromAnthropicJson(root, hints);
}

/** A whole file, JSON or CSV (records from src/datasets/csv.ts's reader), into invoice lines. */
export function parseInvoice(
  body: { kind: 'json'; text: string } | { kind: 'csv'; records: Array<{ line: number; fields?: string[]; error?: string }> },
  hints: ParseHints,
): ParsedInvoice {
  let parsed: ParsedInvoice;
  if (body.kind === 'json') parsed = fromJson(parseJsonExact(body.text), hints);
  else {
    const [head, ...rest] = body.records;
    if (!head) throw badRequest('invoice: the file is empty; a CSV starts with its header');
    if (head.error) throw badRequest(`invoice header (line ${head.line}): ${head.error}`);
    const header = head.fields!.map(headerName);
    const rows = rest.map((r) => {
      if (r.error) throw badRequest(`invoice line ${r.line}: ${r.error}`);
      if (r.fields!.length > header.length)
        throw badRequest(`invoice line ${r.line}: ${r.fields!.length} fields where the header names ${header.length}`);
      return { values: Object.fromEntries(header.map((h, i) => [h, r.fields![i] ?? ''])), where: `line ${r.line}` };
    });
    parsed = fromTable({ header, rows }, hints);
  }
  if (parsed.lines.length === 0) throw badRequest('invoice: no line with an amount (nothing to reconcile)');
  if (parsed.lines.length > MAX_LINES) throw badRequest(`invoice: at most ${MAX_LINES} lines`);
  if (hints.provider && parsed.format !== 'generic' && hints.provider.toLowerCase() !== parsed.provider)
    throw badRequest(`provider: an ${parsed.format} file is billed by ${parsed.format}, not ${JSON.stringify(hints.provider)}`);
  return parsed;
}
