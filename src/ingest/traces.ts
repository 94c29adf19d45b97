// OTLP trace ingest after decoding: map every span's conventions, store the spans through the
// batching writer (the request is answered once ClickHouse acknowledged them: the durable point),
// then mark their traces for assembly. Counting `executions_created` needs no wait for assembly:
// a trace counts when this request brings its first generative-AI span and no execution exists.
import { badRequest } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BatchWriter } from './batch-writer.ts';
import type { DecodeResult, DecodedSpan, MappedSpan } from './otlp/span.ts';
import { mapSpan } from './mapping/index.ts';
import { spanRow, spanRowBytes, type SpanRow } from './span-rows.ts';
import type { PendingTraces, TraceRef } from './assembly/pending.ts';
import type { Assembler } from './assembly/assembler.ts';
import { toClickHouseTime } from '../time.ts';

export interface TraceIngestDeps {
  spanWriter: BatchWriter;
  pending: PendingTraces;
  assembler: Pick<Assembler, 'wake'>;
  /** The content hash of a recorded execution, or undefined (batched lookups). */
  traceHash(projectId: string, traceId: string): Promise<string | undefined>;
  debounceMs: number;
  logger: Logger;
}

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
  prompts: MappedSpan['promptUsages'];
  messages: { input: number; output: number };
  mapped: Record<string, string>;
  ignored: Array<{ key: string; reason: string }>;
  truncated: string[];
}

export interface IngestResult {
  spans_ingested: number;
  executions_created: number;
  spans_rejected: number;
  errors: string[];
  explain?: { spans: SpanExplanation[]; rejected: DecodeResult['rejected'] };
}

const MAX_ERRORS = 20;

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
    prompts: m.promptUsages,
    messages: { input: m.inputMessages.length, output: m.outputMessages.length },
    mapped: m.explain.mapped,
    ignored: m.explain.ignored,
    truncated: span.truncated,
  };
}

export function createTraceIngest(deps: TraceIngestDeps) {
  return {
    async ingest(projectId: string, decoded: DecodeResult, opts: { explain?: boolean } = {}): Promise<IngestResult> {
      const { spans, rejected } = decoded;
      const errors = rejected.slice(0, MAX_ERRORS).map((r) => `span ${r.index}${r.spanId ? ` (${r.spanId})` : ''}: ${r.reason}`);
      if (rejected.length > MAX_ERRORS) errors.push(`... and ${rejected.length - MAX_ERRORS} more rejected spans`);
      if (spans.length === 0 && rejected.length > 0) {
        throw badRequest(`No valid span in the request (${rejected.length} rejected): ${errors.slice(0, 3).join('; ')}`);
      }

      const receivedAt = toClickHouseTime(new Date());
      const resourceJson = new Map<object, string>();
      const rows: SpanRow[] = new Array(spans.length);
      const explained: SpanExplanation[] = [];
      const traces = new Map<string, boolean>(); // trace id → holds a generative-AI span in this request
      let bytes = 0;
      for (let i = 0; i < spans.length; i++) {
        const span = spans[i]!;
        const mapped = mapSpan(span);
        let res = resourceJson.get(span.resource);
        if (res === undefined) resourceJson.set(span.resource, (res = JSON.stringify(span.resource)));
        const row = spanRow(projectId, span, mapped, receivedAt, res);
        rows[i] = row;
        bytes += spanRowBytes(row);
        traces.set(span.traceId, (traces.get(span.traceId) ?? false) || mapped.spanClass === 'inference');
        if (opts.explain) explained.push(explainSpan(span, mapped));
      }

      // Whether the request's generative-AI traces already have an execution is asked while the
      // spans are written (it only feeds `executions_created`), not after.
      const genAi = [...traces].filter(([, ai]) => ai).map(([traceId]) => ({ projectId, traceId }));
      // A failed lookup must not fail a request whose spans were stored: those traces are not counted.
      const existing = Promise.all(genAi.map((r) => deps.traceHash(projectId, r.traceId))).catch(() => genAi.map(() => 'unknown'));
      await deps.spanWriter.write(rows, bytes); // 503 when the queue is full: nothing was written

      const refs: TraceRef[] = [...traces.keys()].map((traceId) => ({ projectId, traceId }));
      const dueAt = Date.now() + deps.debounceMs;
      // The mark is what gets the traces assembled: if it fails (Redis down) the answer is 503, and
      // the exporter's retry stores the spans again (readers take one copy) and marks them.
      await deps.pending.mark(refs, dueAt);
      // A lost wake-up only delays assembly until the next scheduled sweep; a lost claim only the count.
      await deps.assembler.wake(dueAt).catch((err: Error) => deps.logger.warn({ err: { message: err.message } }, 'assembly wake-up not enqueued; the scheduled sweep takes the traces'));

      const firstSight = await deps.pending.claimGenAi(genAi).catch(() => genAi.map(() => false));
      const known = await existing;
      const created = genAi.filter((_r, i) => firstSight[i] && known[i] === undefined).length;

      return {
        spans_ingested: spans.length,
        executions_created: created,
        spans_rejected: rejected.length,
        errors,
        ...(opts.explain ? { explain: { spans: explained, rejected } } : {}),
      };
    },
  };
}

export type TraceIngest = ReturnType<typeof createTraceIngest>;
