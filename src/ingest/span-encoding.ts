// A request's spans as rows of the `spans` table: each span mapped (docs/otel-mapping.md) and
// encoded as RowBinary with the table's own encoder, plus what the ingest log's record and the
// answer need (the traces, which hold a generative-AI span, the rejected spans, the explanation).
// Pure: no store, no clock but the one it is given; it runs on the request's thread or in an
// encoding worker (encode-pool.ts) alike.
import { badRequest } from '../errors.ts';
import { outsideStartWindow, type StartWindow } from '../time.ts';
import type { DecodeResult, DecodedSpan, MappedSpan } from '../executions/span.ts';
import { mapSpan } from './mapping/index.ts';
import { EVALUATION_EVENT, evaluationOf, type Evaluation } from './mapping/evaluations.ts';
import { spanRow } from '../executions/span-rows.ts';
import { ByteSink, type RowEncoder } from '../stores/row-binary.ts';
import { decodeProtobufTraces } from './otlp/decode-protobuf.ts';
import { decodeJsonTraces } from './otlp/decode-json.ts';

export interface SpanExplanation {
  trace_id: string;
  span_id: string;
  name: string;
  class: string;
  operation: string | null;
  model: string | null;
  provider: string | null;
  usage: MappedSpan['usage'] | null;
  provided_cost_usd: number | null;
  agent_id: string | null;
  user_id: string | null;
  session_id: string | null;
  tags: string[];
  metadata: Record<string, string>;
  prompts: MappedSpan['promptUsages'];
  messages: { input: number; output: number };
  mapped: Record<string, string>;
  ignored: Array<{ key: string; reason: string }>;
  truncated: string[];
  /** Scores its evaluation events (gen_ai.evaluation.result) become, or why one does not. */
  evaluations?: Array<{ name: string; value: number | null; label: string | null } | { ignored: string }>;
}

/** A request's spans, encoded. */
export interface EncodedSpans {
  /** The RowBinary rows of `spans`, one per span, in the encoder's columns. */
  payload: Uint8Array;
  rows: number;
  /** The columns the rows were encoded with. */
  columns: number;
  /** The request's trace ids, whether each holds a generative-AI (inference) span, and whether its root span. */
  traceIds: string[];
  genAi: boolean[];
  roots: boolean[];
  rejected: DecodeResult['rejected'];
  /** The first rejections, as the answer shows them. */
  errors: string[];
  /** Evaluation events of the spans (gen_ai.evaluation.result): they become scores. */
  evaluations: Evaluation[];
  /** Links of traces to the dataset items they ran (traceloom.dataset.*): stored as run items. */
  datasetLinks: Array<{ traceId: string; runId: string; itemId: string }>;
  explain?: SpanExplanation[];
}

const MAX_ERRORS = 20;
const EXPLAIN = { explain: true };
const NO_EXPLAIN = {};

export interface SpanEncodingOptions {
  /** Explain each span's mapping in the answer. */
  explain?: boolean;
  /** The API key that sent the spans, recorded on each ('' for other credentials). */
  apiKeyId?: string;
  /** Spans starting outside it are rejected (a partial success); none when absent. */
  startWindow?: StartWindow;
}

function explainSpan(span: DecodedSpan, m: MappedSpan): SpanExplanation {
  return {
    trace_id: span.traceId,
    span_id: span.spanId,
    name: span.name,
    class: m.spanClass,
    operation: m.operation || null,
    model: m.model || null,
    provider: m.provider || null,
    usage: m.usage ?? null,
    provided_cost_usd: m.providedCostUsd !== undefined ? Number(m.providedCostUsd) : null,
    agent_id: m.agentId || null,
    user_id: m.userId || null,
    session_id: m.sessionId || null,
    tags: m.tags,
    metadata: m.metadata,
    prompts: m.promptUsages,
    messages: { input: m.inputMessages.length, output: m.outputMessages.length },
    mapped: m.explain.mapped,
    ignored: m.explain.ignored,
    truncated: span.truncated,
  };
}

/**
 * Maps and encodes a decoded request's spans, received at `receivedAt` (ClickHouse time text).
 * A request whose every span was rejected, or a span whose values no column takes, is a 400.
 */
export function encodeSpans(
  projectId: string,
  decoded: DecodeResult,
  encoder: RowEncoder,
  receivedAt: string,
  opts: SpanEncodingOptions = {},
): EncodedSpans {
  const { spans, rejected } = opts.startWindow ? withinStartWindow(decoded, opts.startWindow) : decoded;
  const errors = rejected.slice(0, MAX_ERRORS).map((r) => `span ${r.index}${r.spanId ? ` (${r.spanId})` : ''}: ${r.reason}`);
  if (rejected.length > MAX_ERRORS) errors.push(`... and ${rejected.length - MAX_ERRORS} more rejected spans`);
  if (spans.length === 0 && rejected.length > 0) {
    throw badRequest(`No valid span in the request (${rejected.length} rejected): ${errors.slice(0, 3).join('; ')}`);
  }
  const resourceJson = new Map<object, string>();
  const explained: SpanExplanation[] = [];
  const traces = new Map<string, { genAi: boolean; root: boolean }>(); // what each trace holds in this request
  const evaluations: Evaluation[] = [];
  const datasetLinks: EncodedSpans['datasetLinks'] = [];
  const sink = new ByteSink(spans.length * 2048);
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i]!;
    const mapped = mapSpan(span, opts.explain ? EXPLAIN : NO_EXPLAIN);
    let res = resourceJson.get(span.resource);
    if (res === undefined) resourceJson.set(span.resource, (res = JSON.stringify(span.resource)));
    const row = spanRow(projectId, span, mapped, receivedAt, res, opts.apiKeyId);
    try {
      encoder.encode(sink, row as unknown as Record<string, unknown>);
    } catch (err) {
      throw badRequest(`span ${i} (${span.spanId}) cannot be stored: ${(err as Error).message}`);
    }
    let trace = traces.get(span.traceId);
    if (!trace) traces.set(span.traceId, (trace = { genAi: false, root: false }));
    if (mapped.spanClass === 'inference') trace.genAi = true;
    if (!row.parent_span_id) trace.root = true;
    if (mapped.datasetLink) datasetLinks.push({ traceId: span.traceId, ...mapped.datasetLink });
    let evaluated: SpanExplanation['evaluations'];
    for (const e of span.events) {
      if (e.name !== EVALUATION_EVENT) continue;
      const r = evaluationOf(e.attributes, { traceId: span.traceId, spanId: span.spanId, timeNs: e.timeNs });
      if ('evaluation' in r) evaluations.push(r.evaluation);
      if (opts.explain)
        (evaluated ??= []).push(
          'evaluation' in r
            ? { name: r.evaluation.name, value: r.evaluation.value ?? null, label: r.evaluation.label ?? null }
            : { ignored: r.reason },
        );
    }
    if (opts.explain) explained.push({ ...explainSpan(span, mapped), ...(evaluated ? { evaluations: evaluated } : {}) });
  }
  return {
    payload: sink.view(),
    rows: spans.length,
    columns: encoder.columns.length,
    traceIds: [...traces.keys()],
    genAi: [...traces.values()].map((t) => t.genAi),
    roots: [...traces.values()].map((t) => t.root),
    rejected,
    errors,
    evaluations,
    datasetLinks,
    ...(opts.explain ? { explain: explained } : {}),
  };
}

/** The decoded spans that start within `window`; the others join the rejected, named with their start time. */
function withinStartWindow(decoded: DecodeResult, window: StartWindow): DecodeResult {
  const minNs = BigInt(window.minMs) * 1_000_000n;
  const maxNs = BigInt(window.maxMs) * 1_000_000n;
  if (decoded.spans.every((s) => s.startTimeNs >= minNs && s.startTimeNs <= maxNs)) return decoded;
  const spans: DecodedSpan[] = [];
  const rejected = [...decoded.rejected];
  // A span's index counts every span of the request, the ones the decoder rejected included.
  const decoderRejected = new Set(decoded.rejected.map((r) => r.index));
  let index = -1;
  for (const s of decoded.spans) {
    do index++;
    while (decoderRejected.has(index));
    if (s.startTimeNs >= minNs && s.startTimeNs <= maxNs) spans.push(s);
    else
      rejected.push({
        index,
        traceId: s.traceId,
        spanId: s.spanId,
        reason: outsideStartWindow(Number(s.startTimeNs / 1_000_000n), window)!,
      });
  }
  rejected.sort((a, b) => a.index - b.index);
  return { spans, rejected };
}

/** An OTLP trace export as received (inflated): protobuf, or JSON (OTLP/JSON or the flat form). */
export interface TraceBody {
  format: 'protobuf' | 'json';
  body: Uint8Array;
}

/** Decodes an export: a 400 naming the problem when it is not one. */
export function decodeTraceBody({ format, body }: TraceBody): DecodeResult {
  if (format === 'protobuf') return decodeProtobufTraces(body);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    throw badRequest(`Request body is not valid JSON: ${(err as Error).message}`);
  }
  return decodeJsonTraces(doc);
}
