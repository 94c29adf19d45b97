// A session as one conversation (GET .../sessions/{id}/conversation): its executions oldest
// first, each with the messages it added (those repeated from the turn before are only counted),
// 20 turns at a time; "Show more" reads the next page by its cursor and appends it.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, enc } from '../api.ts';
import { duration, int, text, usd } from '../format.ts';
import { Link } from '../router.tsx';
import type { ConversationMessage, SessionConversation, SessionTurn } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Spinner, Time } from '../ui.tsx';
import { useListKeys } from '../keys.ts';

const TURNS = 20;

export function SessionConversationView({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const p = `/projects/${enc(projectId)}`;
  const base = `/api${p}/sessions/${enc(sessionId)}/conversation?limit=${TURNS}`;
  const [pages, setPages] = useState<SessionConversation[]>([]);
  const [error, setError] = useState<ApiError | undefined>();
  const [loading, setLoading] = useState(true);
  const load = (cursor: string | null) => {
    setLoading(true);
    api<SessionConversation>(`${base}${cursor ? `&cursor=${enc(cursor)}` : ''}`).then(
      (page) => {
        setPages((was) => (cursor ? [...was, page] : [page]));
        setLoading(false);
      },
      (err) => {
        setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
        setLoading(false);
      },
    );
  };
  useEffect(() => {
    setPages([]);
    setError(undefined);
    load(null);
  }, [base]);
  const turns = pages.flatMap((pg) => pg.items);
  const hrefs = turns.map((t) => `${p}/executions/${enc(t.trace_id)}`);
  const selected = useListKeys(hrefs);
  const last = pages[pages.length - 1];
  if (error) return <ErrorBox error={error} />;
  if (!last) return <Spinner label="Loading the session…" />;
  if (turns.length === 0)
    return (
      <Empty title="No execution in this session">
        <p>
          Check the id, or <Link href={`${p}/sessions`}>pick a session from the list</Link>.
        </p>
      </Empty>
    );
  return (
    <Card title={`${int(last.total)} execution${last.total === 1 ? '' : 's'}, oldest first`}>
      <ol class="conversation">
        {turns.map((t, i) => (
          <Turn turn={t} href={hrefs[i]!} selected={i === selected} />
        ))}
      </ol>
      <div class="conversation-foot">
        <span class="muted">
          {int(turns.length)} of {int(last.total)} shown
        </span>
        {last.next_cursor && (
          <button type="button" name="conversation_more" disabled={loading} onClick={() => load(last.next_cursor)}>
            {loading ? 'Loading…' : 'Show more'}
          </button>
        )}
      </div>
    </Card>
  );
}

function Turn({ turn: t, href, selected }: { turn: SessionTurn; href: string; selected: boolean }) {
  return (
    <li data-trace-id={t.trace_id} class={selected ? 'selected' : ''}>
      <div class="turn-head">
        <Link href={href}>
          <Time iso={t.started_at} />
        </Link>{' '}
        <span class="muted">{t.agent_id || '—'}</span> {t.model} <Badge kind={t.status === 'ok' ? 'ok' : 'bad'}>{t.status}</Badge>{' '}
        <span class="muted">
          {int(t.tokens_in)} in / {int(t.tokens_out)} out · {duration(t.latency_ms)} · {usd(t.cost_usd)}
          {t.user_id && ` · user ${t.user_id}`}
        </span>
        {t.tags.map((tag) => (
          <Badge kind="tag">{tag}</Badge>
        ))}
      </div>
      {t.earlier_messages > 0 && (
        <div class="muted earlier">
          {int(t.earlier_messages)} earlier message{t.earlier_messages === 1 ? '' : 's'} repeated from the turn before
        </div>
      )}
      {t.messages.length === 0 ? (
        <div class="muted">No messages stored for this execution.</div>
      ) : (
        <div class="messages">
          {t.messages.map((m) => (
            <Message m={m} />
          ))}
        </div>
      )}
    </li>
  );
}

function Message({ m }: { m: ConversationMessage }) {
  const content = m.content === undefined || m.content === null ? '' : typeof m.content === 'string' ? m.content : text(m.content);
  return (
    <div class={`msg role-${m.role}`} data-role={m.role}>
      <span class="role">
        {m.role}
        {m.name ? ` · ${m.name}` : ''}
      </span>
      <div class="msg-body">
        {content && <div class="content">{content}</div>}
        {(m.tool_calls ?? []).map((c) => (
          <div class="tool-call">
            → <code>{c.name}</code>({typeof c.arguments === 'string' ? c.arguments : text(c.arguments ?? '')})
          </div>
        ))}
      </div>
    </div>
  );
}
