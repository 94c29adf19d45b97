// The normalized chat and tool-call timeline of an execution (docs/executions.md). For a direct
// record it comes from conversation_history; for a traced one from the conversation merged from
// its spans (conversation.ts), whose messages also carry span_id, timestamp and tool durations.
// OpenAI-style tool calls on assistant messages and `tool` messages answering them by `tool_call_id`.

export interface TimelineEvent {
  index: number;
  type: 'message' | 'tool_call' | 'tool_result' | 'tool';
  timestamp?: string;
  span_id?: string;
  [field: string]: unknown;
}

interface Message {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; name: string; arguments?: unknown }>;
  tool_call_id?: string;
  name?: string;
  is_error?: boolean;
  span_id?: string;
  timestamp?: string;
  duration_ms?: number;
}

/** timestamp and span_id when known (messages from spans). */
function seen(m: Message): Record<string, unknown> {
  return { ...(m.timestamp ? { timestamp: m.timestamp } : {}), ...(m.span_id ? { span_id: m.span_id } : {}) };
}

export function timelineFromMessages(messages: Message[], compactTools: boolean): TimelineEvent[] {
  const events: Omit<TimelineEvent, 'index'>[] = [];
  const callNames = new Map<string, string>();
  const compactByCall = new Map<string, Record<string, unknown>>();
  for (const m of messages) {
    if (m.role === 'tool') {
      const callId = m.tool_call_id ?? '';
      const name = m.name ?? callNames.get(callId) ?? null;
      const isError = m.is_error === true;
      const pending = compactTools ? compactByCall.get(callId) : undefined;
      if (pending) {
        pending.result = m.content ?? null;
        pending.is_error = isError;
        if (m.duration_ms !== undefined) pending.duration_ms = m.duration_ms;
      } else {
        events.push({
          type: 'tool_result',
          call_id: callId,
          name,
          content: m.content ?? null,
          is_error: isError,
          ...(m.duration_ms !== undefined ? { duration_ms: m.duration_ms } : {}),
          ...seen(m),
        });
      }
      continue;
    }
    const hasContent = m.content !== undefined && m.content !== null && m.content !== '';
    if (hasContent || !m.tool_calls?.length) events.push({ type: 'message', role: m.role, content: m.content ?? null, ...seen(m) });
    for (const call of m.tool_calls ?? []) {
      callNames.set(call.id, call.name);
      if (compactTools) {
        const e: Record<string, unknown> & { type: 'tool' } = {
          type: 'tool',
          call_id: call.id,
          name: call.name,
          arguments: call.arguments ?? null,
          result: null,
          is_error: false,
          ...seen(m),
        };
        compactByCall.set(call.id, e);
        events.push(e);
      } else {
        events.push({ type: 'tool_call', call_id: call.id, name: call.name, arguments: call.arguments ?? null, ...seen(m) });
      }
    }
  }
  return events.map((e, index) => ({ index, ...e }) as TimelineEvent);
}
