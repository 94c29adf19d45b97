// Sessions and users: GET .../sessions and .../users over a window (docs/executions.md); the
// sessions page keeps its search, order and offset in the URL. A session is shown as one
// conversation (GET .../sessions/{id}/conversation): each turn the messages it added.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { enc } from '../api.ts';
import { int, usdText } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { SessionList, UserList } from '../types.ts';
import { SessionConversationView } from './session-conversation.tsx';
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
          onClick={() => navigate(withParams(loc, { days: n === 30 ? null : String(n), offset: null }))}
        >
          {title}
        </button>
      ))}
    </div>
  );
  return { start, days, picker };
}

const SESSION_PAGE = 50;
const SESSION_SORTS: Array<[string, string]> = [
  ['last_seen', 'Last seen'],
  ['cost_usd', 'Cost'],
  ['executions', 'Executions'],
  ['errors', 'Errors'],
];

export function Sessions({ projectId }: { projectId: string }) {
  const { start, days, picker } = useWindow();
  const loc = useLocation();
  const user = loc.params.get('user_id');
  const search = loc.params.get('q') ?? '';
  const sort = loc.params.get('sort') ?? 'last_seen';
  const offset = Math.max(0, Number(loc.params.get('offset')) || 0);
  const p = `/projects/${enc(projectId)}`;
  const q = new URLSearchParams({ start, limit: String(SESSION_PAGE) });
  if (user) q.set('user_id', user);
  if (search) q.set('search', search);
  if (sort !== 'last_seen') q.set('sort', sort);
  if (offset) q.set('offset', String(offset));
  const list = useApi<SessionList>(`/api${p}/sessions?${q}`);
  // The count groups every session of the window: asked for apart, so the page draws first.
  const counted = new URLSearchParams(q);
  counted.delete('offset');
  counted.delete('sort'); // the count is the same in any order; the most recent page is the cheap one
  counted.set('limit', '1');
  counted.set('with_total', 'true');
  const count = useApi<SessionList>(`/api${p}/sessions?${counted}`);
  const total = count.data?.total ?? null;
  const hrefs = list.data?.items.map((s) => `${p}/sessions/${enc(s.session_id)}`) ?? [];
  const selected = useListKeys(hrefs);
  const [typed, setTyped] = useState(search);
  useEffect(() => setTyped(search), [search]);
  return (
    <>
      <header class="page">
        <h1>Sessions{user ? ` of ${user}` : ''}</h1>
        {picker}
      </header>
      <form
        class="session-search card"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(withParams(loc, { q: typed.trim() || null, offset: null }));
        }}
      >
        <input
          name="session_search"
          type="search"
          placeholder="Search session or user id"
          aria-label="Search session or user id"
          value={typed}
          onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Search</button>
        <label>
          Order by{' '}
          <select
            name="session_sort"
            value={sort}
            onChange={(e) => {
              const v = (e.target as HTMLSelectElement).value;
              navigate(withParams(loc, { sort: v === 'last_seen' ? null : v, offset: null }));
            }}
          >
            {SESSION_SORTS.map(([v, t]) => (
              <option value={v}>{t}</option>
            ))}
          </select>
        </label>
      </form>
      <Load state={list} label="Loading sessions…">
        {(data) =>
          data.items.length === 0 && offset === 0 ? (
            <Empty title={search ? `No session matches "${search}" in the last ${days} days` : `No session in the last ${days} days`}>
              <p>
                Executions join a session when they carry a session id: <code>session.id</code> on their spans, or <code>session_id</code>{' '}
                in a direct record. Widen the window or send one.
              </p>
            </Empty>
          ) : (
            <Card>
              <div class="table-head">
                <span class="session-count">
                  {total === null ? (
                    <span class="muted">counting sessions…</span>
                  ) : (
                    <>
                      <strong>{int(total)}</strong> session{total === 1 ? '' : 's'}
                    </>
                  )}
                  {data.items.length > 0 && (
                    <span class="muted">
                      {' '}
                      · {int(offset + 1)}–{int(offset + data.items.length)}
                    </span>
                  )}
                </span>
                <span class="pager">
                  <button
                    type="button"
                    name="sessions_previous"
                    disabled={offset === 0}
                    onClick={() => navigate(withParams(loc, { offset: offset > SESSION_PAGE ? String(offset - SESSION_PAGE) : null }))}
                  >
                    ← Previous
                  </button>
                  <button
                    type="button"
                    name="sessions_next"
                    disabled={
                      (total === null ? data.items.length < SESSION_PAGE : offset + data.items.length >= total) ||
                      offset + SESSION_PAGE > 10_000
                    }
                    onClick={() => navigate(withParams(loc, { offset: String(offset + SESSION_PAGE) }))}
                  >
                    Next →
                  </button>
                </span>
              </div>
              <div class="scroll">
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
              </div>
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
  return (
    <>
      <header class="page">
        <h1>
          Session <code>{sessionId}</code>
        </h1>
        <Link href={`${p}/explorer?group_by=model&session_id=${enc(sessionId)}&window=90d`}>Its spend</Link>
      </header>
      <SessionConversationView projectId={projectId} sessionId={sessionId} />
    </>
  );
}
