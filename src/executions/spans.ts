// Reads of one trace's spans, for its hierarchy and timeline: every column, each span once
// (retried batches store a span again; the newest copy is read), scoped to the project.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import type { StoredSpan } from '../ingest/assembly/summarize.ts';
import type { SpanRow } from '../ingest/span-rows.ts';
import type { DecodedEvent } from '../ingest/otlp/span.ts';
import { readLogEvents } from '../ingest/assembly/log-messages.ts';

export type FullSpan = StoredSpan & Pick<SpanRow, 'kind' | 'attributes' | 'resource' | 'events' | 'links' | 'scope_name' | 'truncated'>;

export function createSpanQueries(ch: ClickHouseStore) {
  return {
    async ofTrace(projectId: string, traceId: string): Promise<FullSpan[]> {
      return ch.query<FullSpan>(
        `SELECT trace_id, span_id, parent_span_id, start_time_ns, end_time_ns, received_at, name, kind, status_code, status_message,
           service_name, scope_name, span_class, operation, provider, model, agent_id, session_id, user_id, tags, metadata, has_usage, tokens_in, tokens_out,
           tokens_cached_in, tokens_cache_write_in, tokens_reasoning, toString(cost_provided) AS cost_provided, tool_name, tool_call_id,
           error_message, prompt_usages, truncated, attributes, resource, events, links, messages
         FROM spans WHERE project_id = {p:String} AND trace_id = {t:String}
         ORDER BY span_id, received_at DESC LIMIT 1 BY span_id`,
        { p: projectId, t: traceId },
        'executions.spans',
      );
    },

    /** The trace's GenAI events sent as logs, by span (merged into the spans' messages by the reader). */
    async logEventsOf(projectId: string, traceId: string): Promise<Map<string, DecodedEvent[]>> {
      return (await readLogEvents(ch, projectId, [traceId])).get(traceId) ?? new Map();
    },
  };
}

export type SpanQueries = ReturnType<typeof createSpanQueries>;
