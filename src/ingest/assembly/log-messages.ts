// The GenAI log events stored for traces (span_log_events), read once per batch of traces and
// merged into their spans' messages: a span's own messages win per side (input, output), and its
// log events fill a side the span itself does not carry (content that an SDK sends only as log
// events). Readers call this wherever a span's messages are read: trace assembly, the timeline
// and the hierarchy, so the span and its events may arrive in either order.
import type { DecodedEvent } from '../../executions/span.ts';
import type { FullSpan, SpanRepository } from '../../executions/span-repository.ts';
import { messagesFromEvents } from '../mapping/log-events.ts';

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

/** One trace's spans, every column, with its log events merged in (the hierarchy and the timeline read these). */
export async function spansWithLogMessages(
  spans: Pick<SpanRepository, 'ofTrace' | 'logEvents'>,
  projectId: string,
  traceId: string,
): Promise<FullSpan[]> {
  const [list, events] = await Promise.all([spans.ofTrace(projectId, traceId), spans.logEvents(projectId, [traceId])]);
  return mergeLogEvents(list, events.get(traceId));
}
