// What an execution takes from its spans, for trace assembly and for the hierarchy and timeline
// alike: which spans' usage counts, the LLM calls (their messages) and the tool spans.
import type { LlmCall, ToolSpan } from './conversation.ts';
import type { ParsedMessages, StoredSpan } from './span-rows.ts';

type WalkedSpan = Pick<StoredSpan, 'span_id' | 'parent_span_id' | 'span_class' | 'has_usage'>;
type MessageSpan = Pick<
  StoredSpan,
  'span_id' | 'span_class' | 'start_time_ns' | 'end_time_ns' | 'messages' | 'tool_call_id' | 'tool_name' | 'status_code'
>;

/** Spans with usage that count: inference spans none of whose descendants carries usage. */
export function countedSpans(spans: readonly WalkedSpan[]): Set<string> {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const hasUsageBelow = new Set<string>();
  for (const s of spans) {
    if (s.span_class !== 'inference' || Number(s.has_usage) !== 1) continue;
    // Walk up, marking every ancestor; stop at one already marked (its ancestors are too), so the
    // whole pass is linear in the number of spans whatever the depth. `seen` guards cycles.
    const seen = new Set<string>([s.span_id]);
    for (let p = byId.get(s.parent_span_id); p && !seen.has(p.span_id) && !hasUsageBelow.has(p.span_id); p = byId.get(p.parent_span_id)) {
      seen.add(p.span_id);
      hasUsageBelow.add(p.span_id);
    }
  }
  return new Set(spans.filter((s) => s.span_class === 'inference' && !hasUsageBelow.has(s.span_id)).map((s) => s.span_id));
}

/** A span's `messages` column, parsed; {} when absent or unreadable. */
export function messagesOf(s: Pick<StoredSpan, 'messages'>): ParsedMessages {
  if (!s.messages) return {};
  try {
    return JSON.parse(s.messages) as ParsedMessages;
  } catch {
    return {};
  }
}

/** The LLM calls of a trace (inference spans that carry messages) and its tool spans, in span order. */
export function callsAndTools(spans: readonly MessageSpan[]): { calls: LlmCall[]; tools: ToolSpan[] } {
  const calls: LlmCall[] = [];
  const tools: ToolSpan[] = [];
  for (const s of spans) {
    const startNs = BigInt(s.start_time_ns || '0');
    const endNs = BigInt(s.end_time_ns || '0');
    if (s.span_class === 'inference') {
      const m = messagesOf(s);
      if (m.input?.length || m.output?.length)
        calls.push({ spanId: s.span_id, startNs, endNs, input: m.input ?? [], output: m.output ?? [] });
    } else if (s.span_class === 'tool') {
      const m = messagesOf(s);
      tools.push({
        spanId: s.span_id,
        callId: s.tool_call_id,
        name: s.tool_name,
        startNs,
        endNs,
        isError: s.status_code === 'ERROR',
        arguments: m.tool_arguments,
        result: m.tool_result,
      });
    }
  }
  return { calls, tools };
}
