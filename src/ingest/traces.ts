// OTLP trace ingest after decoding: map every span's conventions, encode the spans as rows of
// the `spans` table (RowBinary), and append them to the ingest log as one record. The request is
// answered once the log's fsync covers the record: the durable point. The loader (span-loader.ts)
// stores the records in ClickHouse in large batches and gets their traces assembled; nothing on
// this path waits for ClickHouse. `executions_created` counts the request's traces that bring a
// generative-AI span this deployment had not seen (pending.claimGenAi).
import { badRequest, PayloadTooLarge, unavailable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DecodeResult, DecodedSpan, MappedSpan } from '../executions/span.ts';
import { mapSpan } from './mapping/index.ts';
import { spanRow } from '../executions/span-rows.ts';
import type { PendingTraces } from './assembly/pending.ts';
import { toClickHouseTime } from '../time.ts';
import { ByteSink, type RowEncoder } from '../stores/row-binary.ts';
import { LogFullError, LogWriteError } from '../stores/write-ahead-log.ts';
import type { IngestLog } from './span-loader.ts';
import type { Metrics } from '../metrics.ts';

export interface TraceIngestDeps {
  log: IngestLog;
  /** The RowBinary encoder of the `spans` table. */
  spansEncoder(): Promise<RowEncoder>;
  pending: Pick<PendingTraces, 'claimGenAi'>;
  /** The ingest queue's bound: a request beyond it could never be accepted (413). */
  maxQueueRows: number;
  maxQueueBytes: number;
  metrics: Pick<Metrics, 'spansAccepted' | 'spansRejected' | 'ingestRefused'>;
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
  user_id: string | null;
  session_id: string | null;
  tags: string[];
  metadata: Record<string, string>;
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

export function createTraceIngest(deps: TraceIngestDeps) {
  let encoder: RowEncoder | undefined;
  /** The 503 of a log that refuses (counted). */
  function refusedBy(err: LogFullError): Error {
    deps.metrics.ingestRefused.inc({ reason: err.reason === 'lag' ? 'behind' : 'queue_full' });
    return unavailable(
      err.reason === 'lag'
        ? 'Ingest is behind (spans accepted earlier are still being stored); retry later'
        : 'The spans write queue is full; retry later',
      1,
    );
  }
  return {
    /** Throws the 503 a request would get now, before its body is read and decoded: refused work is not done. */
    admit(): void {
      const refused = deps.log.refusal();
      if (refused) throw refusedBy(refused);
    },
    /** `apiKeyId`: the key of the caller, recorded on every span ('' for other credentials). */
    async ingest(projectId: string, decoded: DecodeResult, opts: { explain?: boolean; apiKeyId?: string } = {}): Promise<IngestResult> {
      const { spans, rejected } = decoded;
      const errors = rejected.slice(0, MAX_ERRORS).map((r) => `span ${r.index}${r.spanId ? ` (${r.spanId})` : ''}: ${r.reason}`);
      if (rejected.length > MAX_ERRORS) errors.push(`... and ${rejected.length - MAX_ERRORS} more rejected spans`);
      if (spans.length === 0 && rejected.length > 0) {
        throw badRequest(`No valid span in the request (${rejected.length} rejected): ${errors.slice(0, 3).join('; ')}`);
      }

      encoder ??= await deps.spansEncoder();
      const receivedAt = toClickHouseTime(new Date());
      const resourceJson = new Map<object, string>();
      const explained: SpanExplanation[] = [];
      const traces = new Map<string, boolean>(); // trace id → holds a generative-AI span in this request
      const sink = new ByteSink(spans.length * 2048);
      for (let i = 0; i < spans.length; i++) {
        const span = spans[i]!;
        const mapped = mapSpan(span);
        let res = resourceJson.get(span.resource);
        if (res === undefined) resourceJson.set(span.resource, (res = JSON.stringify(span.resource)));
        const row = spanRow(projectId, span, mapped, receivedAt, res, opts.apiKeyId);
        try {
          encoder.encode(sink, row as unknown as Record<string, unknown>);
        } catch (err) {
          throw badRequest(`span ${i} (${span.spanId}) cannot be stored: ${(err as Error).message}`);
        }
        traces.set(span.traceId, (traces.get(span.traceId) ?? false) || mapped.spanClass === 'inference');
        if (opts.explain) explained.push(explainSpan(span, mapped));
      }

      if (spans.length > deps.maxQueueRows || sink.pos > deps.maxQueueBytes) {
        // It would never fit, however long the client waited: not a 503 to retry.
        deps.metrics.ingestRefused.inc({ reason: 'too_large' });
        throw new PayloadTooLarge(
          `The request carries ${spans.length} spans rows (${sink.pos} bytes); one request may carry at most ${deps.maxQueueRows} rows and ${deps.maxQueueBytes} bytes`,
        );
      }
      try {
        await deps.log.append(
          { p: projectId, n: spans.length, t: [...traces.keys()], c: encoder.columns.length },
          Buffer.from(sink.view()),
        );
      } catch (err) {
        if (err instanceof LogFullError) throw refusedBy(err);
        if (err instanceof LogWriteError) {
          deps.metrics.ingestRefused.inc({ reason: 'log_write' });
          deps.logger.error({ err: { message: err.message } }, 'ingest log write failed');
          throw unavailable('The spans could not be made durable (the ingest log cannot be written); retry later', 5);
        }
        throw err;
      }

      deps.metrics.spansAccepted.inc(spans.length);
      if (rejected.length > 0) deps.metrics.spansRejected.inc(rejected.length);
      // Only feeds the response's count: a failure (Redis down) counts nothing, and fails nothing.
      const genAi = [...traces].filter(([, ai]) => ai).map(([traceId]) => ({ projectId, traceId }));
      const firstSight = await deps.pending.claimGenAi(genAi).catch(() => genAi.map(() => false));
      const created = firstSight.filter(Boolean).length;

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
