// Importing items as a stream (docs/datasets.md, "Import and export"): JSON Lines or CSV read
// line by line from the request as it arrives, checked one at a time and committed in batches of
// 1,000, so memory holds one batch whatever the file's size. A line that cannot be an item is
// rejected with its line number and why; the others are kept. Each batch settles the lines up to
// its last one (imports.ts records that), so a retry of the same file reads past them.
import { StringDecoder } from 'node:string_decoder';
import { badRequest } from '../errors.ts';
import { csvRecords } from './csv.ts';
import type { ItemInput } from './datasets.ts';

export type ImportFormat = 'jsonl' | 'csv';

export interface ImportOptions {
  /** Characters a line (a CSV record) may hold; a longer one is rejected. */
  maxLineChars: number;
  /** What no stored value may carry (NUL, lone surrogates, non-finite numbers, deep nesting), named; the edge supplies it. */
  problemsOf(value: unknown, what: string): string[];
  /** Lines up to this one were settled by an earlier request of the same import: read past, not stored again. */
  settledThrough?: number;
  /** Stores a batch (checked items by line, the lines rejected since the last batch, the last line read) in one transaction. */
  commit(batch: LineBatch): Promise<void>;
  /** Items, or items and rejected lines, per batch. */
  batchSize?: number;
}

export interface LineBatch {
  items: Array<{ line: number; item: ItemInput }>;
  /** The first MAX_REPORTED of the batch's rejected lines, with why. */
  rejected: Array<{ line: number; detail: string }>;
  rejectedCount: number;
  lastLine: number;
}

/** An import's body ended before its end (the client went away): what was read whole was committed. */
export class BodyCut extends Error {}

const MAX_REPORTED = 1_000;
const JSONL_FIELDS = new Set(['input', 'expected_output', 'metadata', 'source_trace_id']);
/** Fields of an export line that an import reads past (an exported file imports as new items). */
const EXPORT_ONLY = new Set(['item_id', 'version']);

class LineProblem extends Error {}

/** The request stream failed (the connection closed before the body's end). */
class BodyBroke extends Error {}

async function* decoded(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const chunks = body[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Buffer | string>;
    try {
      next = await chunks.next();
    } catch (err) {
      throw new BodyBroke((err as Error).message);
    }
    if (next.done) break;
    yield typeof next.value === 'string' ? next.value : decoder.write(next.value);
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

/** JSON Lines, each with its line number; a line over `max` characters is an error, never held whole. */
async function* jsonLines(
  text: AsyncIterable<string>,
  max: number,
): AsyncGenerator<{ line: number; text?: string; error?: string; unterminated?: boolean }> {
  let partial = '';
  let tooLong = false;
  let line = 1;
  for await (const chunk of text) {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', from);
      const piece = chunk.slice(from, nl < 0 ? chunk.length : nl);
      if (!tooLong) {
        partial += piece;
        if (partial.length > max) {
          tooLong = true;
          partial = '';
        }
      }
      if (nl < 0) break;
      if (tooLong) yield { line, error: `longer than ${max} characters` };
      else if (partial.trim() !== '') yield { line, text: partial };
      partial = '';
      tooLong = false;
      line++;
      from = nl + 1;
    }
  }
  if (tooLong) yield { line, error: `longer than ${max} characters`, unterminated: true };
  else if (partial.trim() !== '') yield { line, text: partial, unterminated: true };
}

function checked(item: Record<string, unknown>, opts: ImportOptions): ItemInput {
  if (item.input === undefined) throw new LineProblem('input: is required');
  if (item.metadata !== undefined && (item.metadata === null || typeof item.metadata !== 'object' || Array.isArray(item.metadata)))
    throw new LineProblem('metadata: must be a JSON object');
  if (
    item.source_trace_id !== undefined &&
    item.source_trace_id !== null &&
    (typeof item.source_trace_id !== 'string' || item.source_trace_id.length === 0 || item.source_trace_id.length > 256)
  )
    throw new LineProblem('source_trace_id: must be a string of 1 to 256 characters');
  const problems = opts.problemsOf(item, 'item');
  if (problems.length) throw new LineProblem(problems.join('; '));
  return {
    input: item.input,
    ...(item.expected_output !== undefined && item.expected_output !== null ? { expected_output: item.expected_output } : {}),
    metadata: (item.metadata as Record<string, unknown> | undefined) ?? {},
    ...(item.source_trace_id ? { source_trace_id: item.source_trace_id as string } : {}),
  };
}

function fromJsonLine(text: string, opts: ImportOptions): ItemInput {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new LineProblem(`not valid JSON: ${(err as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new LineProblem('must be a JSON object with an "input"');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!JSONL_FIELDS.has(k) && !EXPORT_ONLY.has(k)) throw new LineProblem(`${k}: unknown field`);
  return checked(o, opts);
}

/** A CSV header: which column is which. `input.<name>` columns make the input an object of those variables. */
function csvColumns(
  header: string[],
): Array<{ field: 'input' | 'expected_output' | 'metadata' | 'source_trace_id' | 'variable'; name: string }> {
  const seen = new Set<string>();
  const cols = header.map((raw) => {
    const name = raw.trim();
    if (seen.has(name)) throw badRequest(`CSV header: column "${name}" appears twice`);
    seen.add(name);
    if (name.startsWith('input.') && name.length > 6) return { field: 'variable' as const, name: name.slice(6) };
    if (name === 'input' || name === 'expected_output' || name === 'metadata' || name === 'source_trace_id')
      return { field: name as 'input', name };
    throw badRequest(`CSV header: unknown column "${name}" (input, input.<variable>, expected_output, metadata, source_trace_id)`);
  });
  const hasInput = cols.some((c) => c.field === 'input');
  const hasVariables = cols.some((c) => c.field === 'variable');
  if (!hasInput && !hasVariables) throw badRequest('CSV header: needs an "input" column or "input.<variable>" columns');
  if (hasInput && hasVariables) throw badRequest('CSV header: give an "input" column or "input.<variable>" columns, not both');
  return cols;
}

/** A cell that holds a JSON object or array is that value; any other text is the text itself. */
function jsonOrText(cell: string, field: string): unknown {
  const t = cell.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return cell;
  try {
    return JSON.parse(t);
  } catch (err) {
    throw new LineProblem(`${field}: starts like JSON but does not parse (${(err as Error).message})`);
  }
}

function fromCsvRecord(fields: string[], cols: ReturnType<typeof csvColumns>, opts: ImportOptions): ItemInput {
  if (fields.length !== cols.length) throw new LineProblem(`${fields.length} fields where the header has ${cols.length}`);
  const item: Record<string, unknown> = {};
  const variables: Record<string, string> = {};
  cols.forEach((c, i) => {
    const cell = fields[i]!;
    if (c.field === 'variable') variables[c.name] = cell;
    else if (c.field === 'input') item.input = cell === '' ? undefined : jsonOrText(cell, 'input');
    else if (c.field === 'expected_output') item.expected_output = cell === '' ? undefined : jsonOrText(cell, 'expected_output');
    else if (c.field === 'metadata') {
      if (cell.trim() !== '') {
        const m = jsonOrText(cell, 'metadata');
        if (typeof m === 'string') throw new LineProblem('metadata: must be a JSON object');
        item.metadata = m;
      }
    } else if (cell !== '') item.source_trace_id = cell;
  });
  if (cols.some((c) => c.field === 'variable')) item.input = variables;
  return checked(item, opts);
}

/**
 * Reads, checks and commits a whole import in batches; every batch settles the lines up to its
 * last one. A body that breaks off (or ends before it is whole: `isWhole`) commits the whole lines
 * read first and throws BodyCut. Returns how many lines were read past as settled before.
 */
export async function importItems(
  body: AsyncIterable<Buffer | string>,
  format: ImportFormat,
  opts: ImportOptions,
  isWhole: () => boolean = () => true,
): Promise<{ skippedLines: number }> {
  const batchSize = opts.batchSize ?? 1_000;
  const settled = opts.settledThrough ?? 0;
  let skippedLines = 0;
  let batch: LineBatch = { items: [], rejected: [], rejectedCount: 0, lastLine: settled };
  const flush = async () => {
    if (batch.items.length === 0 && batch.rejectedCount === 0) return;
    await opts.commit(batch);
    batch = { items: [], rejected: [], rejectedCount: 0, lastLine: batch.lastLine };
  };
  const reject = (line: number, detail: string) => {
    if (line <= settled) return void skippedLines++;
    batch.rejectedCount++;
    if (batch.rejected.length < MAX_REPORTED) batch.rejected.push({ line, detail });
    batch.lastLine = line;
  };
  const take = async (line: number, make: () => ItemInput) => {
    if (line <= settled) return void skippedLines++;
    try {
      batch.items.push({ line, item: make() });
    } catch (err) {
      if (!(err instanceof LineProblem)) throw err;
      reject(line, err.message);
    }
    batch.lastLine = line;
    if (batch.items.length + batch.rejectedCount >= batchSize) await flush();
  };
  const text = decoded(body);
  try {
    if (format === 'jsonl') {
      for await (const l of jsonLines(text, opts.maxLineChars)) {
        if (l.unterminated && !isWhole()) break; // the body ended inside this line: not an item
        if (l.error !== undefined) reject(l.line, l.error);
        else await take(l.line, () => fromJsonLine(l.text!, opts));
      }
    } else {
      let cols: ReturnType<typeof csvColumns> | undefined;
      for await (const r of csvRecords(text, opts.maxLineChars)) {
        if (!cols) {
          if ('error' in r) throw badRequest(`CSV header (line ${r.line}): ${r.error}`);
          cols = csvColumns(r.fields);
          continue;
        }
        if ('error' in r) reject(r.line, r.error);
        else await take(r.line, () => fromCsvRecord(r.fields, cols!, opts));
      }
      if (!cols) throw badRequest('CSV: the file is empty; the first line is the header (input, expected_output, metadata, ...)');
    }
  } catch (err) {
    if (!(err instanceof BodyBroke)) throw err;
    await flush();
    throw new BodyCut(`the body broke off after line ${batch.lastLine} (${err.message}): the lines read whole up to it are settled`);
  }
  if (!isWhole()) {
    // The stream ended without an error but short of the request's end: its last line may be cut.
    await flush();
    throw new BodyCut(`the body ended early after line ${batch.lastLine}: the lines read whole up to it are settled`);
  }
  await flush();
  return { skippedLines };
}
