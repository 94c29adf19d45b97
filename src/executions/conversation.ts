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

const nsToIso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();
const durationMs = (start: bigint, end: bigint) => (end >= start ? Number((end - start) / 1_000n) / 1_000 : 0);

function sameCallIds(a: NormalizedMessage['tool_calls'], b: NormalizedMessage['tool_calls']): boolean {
  const n = a?.length ?? 0;
  if (n !== (b?.length ?? 0)) return false;
  for (let i = 0; i < n; i++) if (a![i]!.id !== b![i]!.id) return false;
  return true;
}

function sameMessage(a: NormalizedMessage, b: NormalizedMessage): boolean {
  if (a.role !== b.role || (a.tool_call_id ?? '') !== (b.tool_call_id ?? '')) return false;
  if ((a.content ?? '') !== (b.content ?? '')) return false;
  return sameCallIds(a.tool_calls, b.tool_calls);
}

/**
 * One message of the merged conversation: the message as its span carried it (never copied or
 * changed here), with where and when it was seen, and what its tool span adds.
 */
interface Merged {
  message: NormalizedMessage;
  spanId: string;
  atNs: bigint;
  durationMs?: number;
  isError?: boolean;
}

/** The merge itself (see the file's head): the two exported forms below only present it. */
function merge(calls: readonly LlmCall[], tools: readonly ToolSpan[]): Merged[] {
  const out: Merged[] = [];
  const ordered = [...calls].sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : a.spanId.localeCompare(b.spanId)));
  for (const call of ordered) {
    // Skip the longest prefix of this call's input that the conversation already holds, in order.
    let skip = 0;
    while (skip < call.input.length && skip < out.length && sameMessage(call.input[skip]!, out[skip]!.message)) skip++;
    // An input that does not continue the conversation (another agent's call) is still shown, but
    // messages equal to the conversation's last ones are not repeated.
    const held = out.length;
    for (let i = skip; i < call.input.length; i++) {
      const m = call.input[i]!;
      if (skip === 0 && i < held && out.some((o, k) => k < held && sameMessage(o.message, m))) continue;
      out.push({ message: m, spanId: call.spanId, atNs: call.startNs });
    }
    for (const m of call.output) out.push({ message: m, spanId: call.spanId, atNs: call.endNs });
  }

  // Tool spans: results for calls that no tool message answered, duration and error for all.
  const byCall = new Map<string, ToolSpan>();
  for (const t of tools) if (t.callId) byCall.set(t.callId, t);
  if (byCall.size === 0) return out;
  const answered = new Set<string>();
  for (const e of out) {
    const m = e.message;
    if (m.role !== 'tool' || !m.tool_call_id) continue;
    answered.add(m.tool_call_id);
    const t = byCall.get(m.tool_call_id);
    if (t) {
      e.durationMs = durationMs(t.startNs, t.endNs);
      if (t.isError) e.isError = true;
    }
  }
  for (let i = 0; i < out.length; i++) {
    const m = out[i]!.message;
    if (!m.tool_calls?.length) continue;
    const missing = m.tool_calls.filter((c) => !answered.has(c.id) && byCall.has(c.id));
    let at = i + 1;
    for (const c of missing) {
      const t = byCall.get(c.id)!;
      const result: NormalizedMessage = {
        role: 'tool',
        content: t.result === undefined || t.result === null ? null : typeof t.result === 'string' ? t.result : JSON.stringify(t.result),
        tool_call_id: c.id,
        name: t.name || c.name,
      };
      out.splice(at++, 0, {
        message: result,
        spanId: t.spanId,
        atNs: t.endNs,
        durationMs: durationMs(t.startNs, t.endNs),
        isError: t.isError || undefined,
      });
      answered.add(c.id);
    }
  }
  return out;
}

/** The merged conversation of LLM calls (ordered by start), with tool results from tool spans. */
export function mergeConversation(calls: readonly LlmCall[], tools: readonly ToolSpan[]): TracedMessage[] {
  return merge(calls, tools).map((e) => {
    const m: TracedMessage = { ...e.message, span_id: e.spanId, timestamp: nsToIso(e.atNs) };
    if (e.durationMs !== undefined) m.duration_ms = e.durationMs;
    if (e.isError) m.is_error = true;
    return m;
  });
}

/**
 * The conversation as stored on the execution (conversation_history): the merged messages
 * without where and when they were seen, but with a tool's error. A message is the span's own
 * object unless its tool span adds an error.
 */
export function storedConversation(calls: readonly LlmCall[], tools: readonly ToolSpan[]): NormalizedMessage[] {
  return merge(calls, tools).map((e) => (e.isError ? { ...e.message, is_error: true } : e.message));
}
