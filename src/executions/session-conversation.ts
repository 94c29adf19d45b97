// A session as one conversation (GET …/sessions/{session_id}/conversation, docs/executions.md):
// its executions oldest first, each with the messages it added. A model call re-sends the history,
// so an execution's stored conversation (conversation_history: a direct record's messages, or the
// conversation merged from a traced one's spans, conversation.ts) starts with what the turn before
// it already held; those messages are counted (`earlier_messages`), not repeated.
import type { NormalizedMessage } from './span.ts';
import type { ExecutionListing } from './execution-listing-repository.ts';
import type { ExecutionDetail } from './execution-detail-repository.ts';
import { decodeCursor } from './execution-filter.ts';

const key = (m: NormalizedMessage) =>
  JSON.stringify([m.role, m.content ?? null, m.tool_call_id ?? null, (m.tool_calls ?? []).map((c) => c.id)]);

/** How many leading messages of `next` repeat those of `before`. */
function sharedPrefix(before: NormalizedMessage[], next: NormalizedMessage[]): number {
  let n = 0;
  while (n < before.length && n < next.length && key(before[n]!) === key(next[n]!)) n++;
  return n;
}

function messagesOf(json: string | undefined): NormalizedMessage[] {
  try {
    const v = JSON.parse(json || '[]') as unknown;
    return Array.isArray(v) ? (v as NormalizedMessage[]) : [];
  } catch {
    return [];
  }
}

export function createSessionConversation(deps: { listing: Pick<ExecutionListing, 'list'>; detail: Pick<ExecutionDetail, 'ofTraces'> }) {
  return {
    /** A page of the session's turns, oldest first: keyset pages by `next_cursor`. */
    async page(projectId: string, sessionId: string, q: { limit: number; cursor?: string }) {
      const list = await deps.listing.list(projectId, {
        session_id: [sessionId],
        sort: 'started_at',
        order: 'asc',
        limit: q.limit,
        offset: 0,
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
      // The turn before this page (the cursor's), whose messages the page's first turn repeats.
      const before = q.cursor ? decodeCursor(q.cursor, 'started_at', 'asc').traceId : undefined;
      const ids = [...list.items.map((i) => i.trace_id), ...(before ? [before] : [])];
      const rows = await deps.detail.ofTraces(projectId, ids, true);
      const history = new Map(rows.map((r) => [r.trace_id, messagesOf(r.conversation_history)]));
      let previous = before ? (history.get(before) ?? []) : [];
      const items = list.items.map((item) => {
        const messages = history.get(item.trace_id) ?? [];
        const earlier = sharedPrefix(previous, messages);
        previous = messages;
        return { ...item, earlier_messages: earlier, messages: messages.slice(earlier) };
      });
      return { session_id: sessionId, items, total: list.total, limit: q.limit, next_cursor: list.next_cursor };
    },
  };
}

export type SessionConversation = ReturnType<typeof createSessionConversation>;
