// The `spans` and `span_log_events` tables: every SQL statement that reads them, and how spans
// are inserted. Each query is scoped to one project (recovery after a restart, which looks across
// projects, excepted); a span is read once (retried batches store a span again; the newest copy is
// read). Rows are written by the span loader (RowBinary, `insert` below) and the log ingest's
// batching writer.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import type { AttrValue, DecodedEvent } from './span.ts';
import type { FullSpan, StoredSpan } from './span-rows.ts';
import type { FailedSpanFields } from './error-reason.ts';

export type { FullSpan };

/** The columns assembly reads: messages only on inference and tool spans. */
export const ASSEMBLY_COLUMNS = `trace_id, span_id, parent_span_id, start_time_ns, end_time_ns, received_at, name, status_code, status_message,
  service_name, span_class, operation, provider, model, agent_id, session_id, user_id, tags, metadata,
  has_usage, tokens_in, tokens_out, tokens_cached_in, tokens_cache_write_in, tokens_reasoning,
  toString(cost_provided) AS cost_provided, tool_name, tool_call_id, error_message,
  prompt_usages, if(span_class IN ('inference', 'tool'), messages, '') AS messages, api_key_id, environment,
  usage_details, pricing_context`;

interface EventRow {
  trace_id: string;
  span_id: string;
  time_ns: string;
  event_name: string;
  attributes: string;
}

/** trace id → span id → its log events, in time order (then arrival order). */
export type LogEventsByTrace = Map<string, Map<string, DecodedEvent[]>>;

export function createSpanRepository(ch: ClickHouseStore) {
  return {
    /**
     * Inserts span rows encoded by `encoderOf('spans')`, as one insert deduplicated by `token`.
     * `columns`: rows encoded with only the first columns (a record written before later columns
     * were appended); a record without a count was written before migration 004 appended user_id,
     * tags, metadata.
     */
    async insert(payloads: readonly Buffer[], token: string, columns: number | undefined): Promise<void> {
      await ch.insertRowBinary(
        'spans',
        payloads,
        {
          insert_deduplication_token: token,
          // Spans of one batch may fall in many months (partitions); refusing them would fail the batch for nothing.
          max_partitions_per_insert_block: '1000',
          // Duplicates within a batch are left to merges: every reader takes one copy of a span.
          optimize_on_insert: 0,
        },
        columns ?? (await ch.encoderOf('spans')).columns.indexOf('user_id'),
      );
    },

    /** Every column of one trace's spans (the hierarchy and the timeline). */
    async ofTrace(projectId: string, traceId: string): Promise<FullSpan[]> {
      return ch.query<FullSpan>(
        `SELECT trace_id, span_id, parent_span_id, start_time_ns, end_time_ns, received_at, name, kind, status_code, status_message,
           service_name, scope_name, span_class, operation, provider, model, agent_id, session_id, user_id, tags, metadata,
           has_usage, tokens_in, tokens_out, tokens_cached_in, tokens_cache_write_in, tokens_reasoning, toString(cost_provided) AS cost_provided, tool_name, tool_call_id,
           error_message, prompt_usages, truncated, attributes, resource, events, links, messages, api_key_id, environment,
           usage_details, pricing_context
         FROM spans WHERE project_id = {p:String} AND trace_id = {t:String}
         ORDER BY span_id, received_at DESC LIMIT 1 BY span_id`,
        { p: projectId, t: traceId },
        'executions.spans',
      );
    },

    /** The failed spans of one trace, with what says why (error-reason.ts). */
    async failedOf(projectId: string, traceId: string): Promise<FailedSpanFields[]> {
      return ch.query<FailedSpanFields>(
        `SELECT span_id, parent_span_id, start_time_ns, status_code, status_message, error_message FROM (
           SELECT span_id, parent_span_id, start_time_ns, status_code, status_message, error_message
           FROM spans WHERE project_id = {p:String} AND trace_id = {t:String}
           ORDER BY span_id, received_at DESC LIMIT 1 BY span_id)
         WHERE status_code = 'ERROR'`,
        { p: projectId, t: traceId },
        'executions.failedSpans',
      );
    },

    /** The span that carries a response id (`gen_ai.response.id`), or undefined: where an evaluation without span context belongs. */
    async ofResponse(projectId: string, responseId: string): Promise<{ trace_id: string; span_id: string } | undefined> {
      const [row] = await ch.query<{ trace_id: string; span_id: string }>(
        'SELECT trace_id, span_id FROM spans WHERE project_id = {p:String} AND response_id = {r:String} LIMIT 1',
        { p: projectId, r: responseId },
        'spans.ofResponse',
      );
      return row;
    },

    /** The spans of these traces that assembly reads, by trace. */
    async forAssembly(projectId: string, traceIds: string[]): Promise<Map<string, StoredSpan[]>> {
      const rows = await ch.query<StoredSpan>(
        `SELECT ${ASSEMBLY_COLUMNS} FROM spans
         WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}
         ORDER BY trace_id, span_id, received_at DESC
         LIMIT 1 BY trace_id, span_id`,
        { p: projectId, ids: traceIds },
        'assembly.spans',
      );
      const byTrace = new Map<string, StoredSpan[]>();
      for (const r of rows) {
        let list = byTrace.get(r.trace_id);
        if (!list) byTrace.set(r.trace_id, (list = []));
        list.push(r);
      }
      return byTrace;
    },

    /** The GenAI log events stored for these traces (span_log_events), each record once. */
    async logEvents(projectId: string, traceIds: readonly string[]): Promise<LogEventsByTrace> {
      const out: LogEventsByTrace = new Map();
      if (traceIds.length === 0) return out;
      const rows = await ch.query<EventRow>(
        `SELECT trace_id, span_id, time_ns, event_name, attributes FROM (
           SELECT trace_id, span_id, time_ns, received_at, seq, event_name, attributes FROM span_log_events
           WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}
           ORDER BY trace_id, span_id, record_hash, received_at
           LIMIT 1 BY trace_id, span_id, record_hash)
         ORDER BY trace_id, span_id, time_ns, received_at, seq`,
        { p: projectId, ids: traceIds },
        'spans.log_events',
      );
      for (const r of rows) {
        let spans = out.get(r.trace_id);
        if (!spans) out.set(r.trace_id, (spans = new Map()));
        let list = spans.get(r.span_id);
        if (!list) spans.set(r.span_id, (list = []));
        let attributes: Record<string, AttrValue> = {};
        try {
          attributes = JSON.parse(r.attributes) as Record<string, AttrValue>;
        } catch {
          // stored by us as JSON; unreadable means nothing to merge
        }
        list.push({ name: r.event_name, timeNs: BigInt(r.time_ns), attributes });
      }
      return out;
    },

    /** Of these traces, the ones with spans or GenAI log events stored (light key reads). */
    async tracesWithSpans(projectId: string, traceIds: string[]): Promise<string[]> {
      const rows = await ch.query<{ trace_id: string }>(
        `SELECT DISTINCT trace_id FROM spans WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}
         UNION DISTINCT
         SELECT DISTINCT trace_id FROM span_log_events WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}`,
        { p: projectId, ids: traceIds },
        'assembly.known',
      );
      return rows.map((r) => r.trace_id);
    },

    /** Traces that received generative-AI spans, or GenAI log events for their spans, since then (every project; the latest first). */
    async genAiTracesSince(since: string, limit: number): Promise<Array<{ project_id: string; trace_id: string; last: string }>> {
      return ch.query<{ project_id: string; trace_id: string; last: string }>(
        `SELECT project_id, trace_id, max(last) AS last FROM (
           SELECT project_id, trace_id, max(received_at) AS last FROM spans
           WHERE received_at >= toDateTime64({since:String}, 3, 'UTC')
           GROUP BY project_id, trace_id HAVING countIf(span_class = 'inference') > 0
           UNION ALL
           SELECT project_id, trace_id, max(received_at) AS last FROM span_log_events
           WHERE received_at >= toDateTime64({since:String}, 3, 'UTC')
           GROUP BY project_id, trace_id)
         GROUP BY project_id, trace_id ORDER BY last DESC LIMIT {limit:UInt32}`,
        { since, limit },
        'assembly.recover.spans',
      );
    },
  };
}

export type SpanRepository = ReturnType<typeof createSpanRepository>;
