// The GenAI log events stored for traces (span_log_events), read once per batch of traces and
// merged into their spans' messages: a span's own messages win per side (input, output), and its
// log events fill a side the span itself does not carry (content that an SDK sends only as log
// events). Readers call this wherever a span's messages are read: trace assembly, the timeline
// and the hierarchy, so the span and its events may arrive in either order.
import type { ClickHouseStore } from '../../stores/clickhouse.ts';
import type { AttrValue, DecodedEvent } from '../otlp/span.ts';
import { messagesFromEvents } from '../mapping/log-events.ts';

interface EventRow {
  trace_id: string;
  span_id: string;
  time_ns: string;
  event_name: string;
  attributes: string;
}

/** trace id → span id → its log events, in time order (then arrival order). */
export type LogEventsByTrace = Map<string, Map<string, DecodedEvent[]>>;

export async function readLogEvents(ch: ClickHouseStore, projectId: string, traceIds: readonly string[]): Promise<LogEventsByTrace> {
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
}

interface WithMessages {
  span_id: string;
  messages: string;
}

/** The span with its log events' messages merged in (a new object when anything changed). */
export function withLogMessages<S extends WithMessages>(span: S, events: readonly DecodedEvent[] | undefined): S {
  if (!events || events.length === 0) return span;
  const fromLogs = messagesFromEvents([...events]);
  if (fromLogs.input.length === 0 && fromLogs.output.length === 0) return span;
  let own: Record<string, unknown> = {};
  if (span.messages) {
    try {
      own = JSON.parse(span.messages) as Record<string, unknown>;
    } catch {
      own = {};
    }
  }
  const has = (v: unknown) => Array.isArray(v) && v.length > 0;
  const merged = {
    ...own,
    input: has(own.input) ? own.input : fromLogs.input,
    output: has(own.output) ? own.output : fromLogs.output,
  };
  return { ...span, messages: JSON.stringify(merged) };
}

/** Every span of a trace with its log events merged in. */
export function mergeLogEvents<S extends WithMessages>(spans: readonly S[], events: Map<string, DecodedEvent[]> | undefined): S[] {
  return events && events.size > 0 ? spans.map((s) => withLogMessages(s, events.get(s.span_id))) : [...spans];
}
