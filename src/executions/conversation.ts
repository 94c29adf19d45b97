// The conversation of a traced execution, from its spans (docs/otel-mapping.md, "Messages and
// the timeline"): each LLM call re-sends the history, so the calls are merged in start order and a
// call's input that repeats what is already in the conversation (as a prefix) is not repeated.
// Tool spans join the tool calls by call id: they give a call its duration and error status, and
// its result when no `tool` message carries one.
import type { NormalizedMessage } from './span.ts';

export interface LlmCall {
  spanId: string;
  startNs: bigint;
  endNs: bigint;
  input: NormalizedMessage[];
  output: NormalizedMessage[];
}

export interface ToolSpan {
  spanId: string;
  callId: string;
  name: string;
  startNs: bigint;
  endNs: bigint;
  isError: boolean;
  arguments?: unknown;
  result?: unknown;
}

/** A message with where and when it was seen. */
export interface TracedMessage extends NormalizedMessage {
  span_id?: string;
  timestamp?: string;
  is_error?: boolean;
  duration_ms?: number;
}

export const nsToIso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();
const durationMs = (start: bigint, end: bigint) => (end >= start ? Number((end - start) / 1_000n) / 1_000 : 0);

function sameMessage(a: NormalizedMessage, b: NormalizedMessage): boolean {
  if (a.role !== b.role || (a.tool_call_id ?? '') !== (b.tool_call_id ?? '')) return false;
  if ((a.content ?? '') !== (b.content ?? '')) return false;
  const ca = (a.tool_calls ?? []).map((c) => c.id).join(',');
  const cb = (b.tool_calls ?? []).map((c) => c.id).join(',');
  return ca === cb;
}

/** The merged conversation of LLM calls (ordered by start), with tool results from tool spans. */
export function mergeConversation(calls: readonly LlmCall[], tools: readonly ToolSpan[]): TracedMessage[] {
  const out: TracedMessage[] = [];
  const ordered = [...calls].sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : a.spanId.localeCompare(b.spanId)));
  for (const call of ordered) {
    // Skip the longest prefix of this call's input that the conversation already holds, in order.
    let skip = 0;
    while (skip < call.input.length && skip < out.length && sameMessage(call.input[skip]!, out[skip]!)) skip++;
    // An input that does not continue the conversation (another agent's call) is still shown, but
    // messages equal to the conversation's last ones are not repeated.
    const rest = call.input.slice(skip).filter((m, i) => !(skip === 0 && i < out.length && out.some((o) => sameMessage(o, m))));
    for (const m of rest) out.push({ ...m, span_id: call.spanId, timestamp: nsToIso(call.startNs) });
    for (const m of call.output) out.push({ ...m, span_id: call.spanId, timestamp: nsToIso(call.endNs) });
  }

  // Tool spans: results for calls that no tool message answered, duration and error for all.
  const byCall = new Map(tools.filter((t) => t.callId).map((t) => [t.callId, t]));
  const answered = new Set(out.filter((m) => m.role === 'tool' && m.tool_call_id).map((m) => m.tool_call_id!));
  for (const m of out) {
    if (m.role === 'tool' && m.tool_call_id) {
      const t = byCall.get(m.tool_call_id);
      if (t) {
        m.duration_ms = durationMs(t.startNs, t.endNs);
        if (t.isError) m.is_error = true;
      }
    }
  }
  for (let i = 0; i < out.length; i++) {
    const m = out[i]!;
    const missing = (m.tool_calls ?? []).filter((c) => !answered.has(c.id) && byCall.has(c.id));
    let at = i + 1;
    for (const c of missing) {
      const t = byCall.get(c.id)!;
      const result: TracedMessage = {
        role: 'tool',
        content: t.result === undefined || t.result === null ? null : typeof t.result === 'string' ? t.result : JSON.stringify(t.result),
        tool_call_id: c.id,
        name: t.name || c.name,
        span_id: t.spanId,
        timestamp: nsToIso(t.endNs),
        duration_ms: durationMs(t.startNs, t.endNs),
        ...(t.isError ? { is_error: true } : {}),
      };
      out.splice(at++, 0, result);
      answered.add(c.id);
    }
  }
  return out;
}

/** The conversation as stored on the execution (conversation_history): messages without the span annotations. */
export function plainConversation(messages: readonly TracedMessage[]): NormalizedMessage[] {
  return messages.map(({ span_id: _s, timestamp: _t, duration_ms: _d, ...m }) => m);
}
