// Sessions and users: GET .../sessions and .../users over a window (docs/executions.md), and a
// session's executions oldest first as one conversation (GET .../executions?session_id=).
import { useMemo } from 'preact/hooks';
import { enc } from '../api.ts';
import { duration, int, usd, usdText } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { ExecutionList, SessionList, UserList } from '../types.ts';
import { Badge, Card, Empty, Load, Time, useApi } from '../ui.tsx';
import { useListKeys } from '../keys.ts';

const WINDOWS: Array<[string, number]> = [
  ['24 h', 1],
  ['7 d', 7],
  ['30 d', 30],
  ['90 d', 90],
];

function useWindow() {
  const loc = useLocation();
  const days = Number(loc.params.get('days')) || 30;
  // Fixed when the window is picked: a start moving with every render would fetch again forever.
  const start = useMemo(() => new Date(Date.now() - days * 86_400_000).toISOString(), [days]);
  const picker = (
    <div class="inline">
      {WINDOWS.map(([title, n]) => (
        <button
          type="button"
          class={n === days ? 'active' : ''}
          onClick={() => navigate(withParams(loc, { days: n === 30 ? null : String(n) }))}
        >
          {title}
        </button>
      ))}
    </div>
  );
  return { start, days, picker };
}

export function Sessions({ projectId }: { projectId: string }) {
  const { start, days, picker } = useWindow();
  const user = useLocation().params.get('user_id');
  const p = `/projects/${enc(projectId)}`;
  const list = useApi<SessionList>(`/api${p}/sessions?start=${enc(start)}${user ? `&user_id=${enc(user)}` : ''}`);
  const hrefs = list.data?.items.map((s) => `${p}/sessions/${enc(s.session_id)}`) ?? [];
  const selected = useListKeys(hrefs);
  return (
    <>
      <header class="page">
        <h1>Sessions{user ? ` of ${user}` : ''}</h1>
        {picker}
      </header>
      <Load state={list} label="Loading sessions…">
        {(data) =>
          data.items.length === 0 ? (
            <Empty title={`No session in the last ${days} days`}>
              <p>
                Executions join a session when they carry a session id: <code>session.id</code> on their spans, or <code>session_id</code>{' '}
                in a direct record. Widen the window or send one.
              </p>
            </Empty>
          ) : (
            <Card>
              <table class="sessions">
                <thead>
                  <tr>
                    <th>Session</th>
                    <th>User</th>
                    <th class="num">Executions</th>
                    <th class="num">Errors</th>
                    <th class="num">Cost</th>
                    <th>First seen</th>
                    <th>Last seen</th>
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((s, i) => (
                    <tr
                      data-session-id={s.session_id}
                      class={`clickable ${i === selected ? 'selected' : ''}`}
                      onClick={() => navigate(hrefs[i]!)}
                    >
                      <td>
                        <Link href={hrefs[i]!}>{s.session_id}</Link>
                      </td>
                      <td>{s.user_id ? <Link href={`${p}/executions?user_id=${enc(s.user_id)}`}>{s.user_id}</Link> : '—'}</td>
                      <td class="num">{int(s.executions)}</td>
                      <td class="num">{s.errors > 0 ? <Badge kind="bad">{int(s.errors)}</Badge> : '0'}</td>
                      <td class="num">{usdText(s.cost_usd)}</td>
                      <td>
                        <Time iso={s.first_seen} />
                      </td>
                      <td>
                        <Time iso={s.last_seen} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Card>
          )
        }
      </Load>
    </>
  );
}

export function Users({ projectId }: { projectId: string }) {
  const { start, days, picker } = useWindow();
  const p = `/projects/${enc(projectId)}`;
  const list = useApi<UserList>(`/api${p}/users?start=${enc(start)}`);
  const hrefs = list.data?.items.map((u) => `${p}/executions?user_id=${enc(u.user_id)}`) ?? [];
  const selected = useListKeys(hrefs);
  return (
    <>
      <header class="page">
        <h1>Users</h1>
        {picker}
      </header>
      <Load state={list} label="Loading users…">
        {(data) =>
          data.items.length === 0 ? (
            <Empty title={`No user in the last ${days} days`}>
              <p>
                Executions name their user with <code>user.id</code> on their spans, or <code>user_id</code> in a direct record. Widen the
                window or send one.
              </p>
            </Empty>
          ) : (
            <Card>
              <table class="users">
                <thead>
                  <tr>
                    <th>User</th>
                    <th class="num">Sessions</th>
                    <th class="num">Executions</th>
                    <th class="num">Errors</th>
                    <th class="num">Cost</th>
                    <th>Last seen</th>
                    <th>See</th>
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((u, i) => (
                    <tr data-user-id={u.user_id} class={i === selected ? 'selected' : ''}>
                      <td>
                        <Link href={hrefs[i]!}>{u.user_id}</Link>
                      </td>
                      <td class="num">
                        <Link href={`${p}/sessions?user_id=${enc(u.user_id)}`}>{int(u.sessions)}</Link>
                      </td>
                      <td class="num">{int(u.executions)}</td>
                      <td class="num">{u.errors > 0 ? <Badge kind="bad">{int(u.errors)}</Badge> : '0'}</td>
                      <td class="num">{usdText(u.cost_usd)}</td>
                      <td>
                        <Time iso={u.last_seen} />
                      </td>
                      <td>
                        <Link href={hrefs[i]!}>executions</Link> ·{' '}
                        <Link href={`${p}/explorer?group_by=model&user_id=${enc(u.user_id)}&window=${days}d`}>spend</Link>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Card>
          )
        }
      </Load>
    </>
  );
}

/** One session: its executions oldest first, as one conversation. */
export function SessionDetail({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const p = `/projects/${enc(projectId)}`;
  const list = useApi<ExecutionList>(`/api${p}/executions?session_id=${enc(sessionId)}&limit=1000`);
  const items = [...(list.data?.items ?? [])].reverse();
  const hrefs = items.map((e) => `${p}/executions/${enc(e.trace_id)}`);
  const selected = useListKeys(hrefs);
  return (
    <>
      <header class="page">
        <h1>
          Session <code>{sessionId}</code>
        </h1>
        <Link href={`${p}/explorer?group_by=model&session_id=${enc(sessionId)}&window=90d`}>Its spend</Link>
      </header>
      <Load state={list} label="Loading the session…">
        {(data) =>
          data.items.length === 0 ? (
            <Empty title="No execution in this session">
              <p>
                Check the id, or <Link href={`${p}/sessions`}>pick a session from the list</Link>.
              </p>
            </Empty>
          ) : (
            <Card title={`${int(data.total)} executions, oldest first${data.next_cursor ? ' (the latest 1,000)' : ''}`}>
              <ol class="conversation">
                {items.map((e, i) => (
                  <li data-trace-id={e.trace_id} class={i === selected ? 'selected' : ''}>
                    <div class="turn-head">
                      <Link href={hrefs[i]!}>
                        <Time iso={e.started_at} />
                      </Link>{' '}
                      <span class="muted">{e.agent_id || '—'}</span> {e.model}{' '}
                      <Badge kind={e.status === 'ok' ? 'ok' : 'bad'}>{e.status}</Badge>
                    </div>
                    <div class="muted">
                      {int(e.tokens_in)} in / {int(e.tokens_out)} out · {duration(e.latency_ms)} · {usd(e.cost_usd)}
                      {e.user_id && ` · user ${e.user_id}`}
                      {e.tags.map((t) => (
                        <Badge kind="tag">{t}</Badge>
                      ))}
                    </div>
                  </li>
                ))}
              </ol>
            </Card>
          )
        }
      </Load>
    </>
  );
}
