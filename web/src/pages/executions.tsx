// Executions: the filtered list (GET .../executions), keyset pages by next_cursor, export. The
// query string of the page is the API's own query, so a link keeps the filters, exclusions
// (`exclude_<field>`), score filters (`score.<name>.gte|lte|eq`, `has_score`: score-filter.tsx),
// metadata (`metadata.<key>=<value>`) and the server-side order (`sort`, `order`); plus the score
// columns shown (`columns=score:<name>,…`, asked of the API as `scores`). j / k and Enter walk the
// rows (keys.ts).
import { useLayoutEffect, useMemo } from 'preact/hooks';
import { enc } from '../api.ts';
import { duration, int, usd } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { ExecutionList, ListedExecution } from '../types.ts';
import type { ComponentChildren } from 'preact';
import { Badge, Card, Empty, Load, TableScroll, Time, useApi, Zone } from '../ui.tsx';
import { ExportButtons } from './export.tsx';
import { useListKeys } from '../keys.ts';

import { isScoreFilter } from './score-filter.tsx';
import { isExclusion, ScoreColumns, scoreColumnsOf } from './executions-controls.tsx';
import { FILTERS, FilterBar, isMetadata } from './executions-filter-bar.tsx';

/** The orders the API computes over every matching execution (sort=…&order=asc|desc). */
type SortKey = 'started_at' | 'latency_ms' | 'cost_usd' | 'tokens';

// Cursors of the pages before the current one, per filter set: "Previous" walks back through them.
const cursorTrail = new Map<string, string[]>();

export function Executions({ projectId }: { projectId: string }) {
  const loc = useLocation();
  const filters = useMemo(() => {
    const f = new URLSearchParams();
    for (const k of FILTERS) {
      const v = loc.params.get(k);
      if (v) f.set(k, v);
    }
    for (const [k, v] of loc.params) if (v && (isScoreFilter(k) || isMetadata(k) || isExclusion(k))) f.append(k, v);
    return f;
  }, [loc.params.toString()]);
  const cursor = loc.params.get('cursor') ?? '';
  const limit = loc.params.get('limit') ?? '50';
  const sort = loc.params.get('sort') ?? '';
  const order = loc.params.get('order') ?? '';
  const scoreColumns = scoreColumnsOf(loc.params.get('columns'));
  const apiQuery = new URLSearchParams(filters);
  apiQuery.set('limit', limit);
  if (sort) apiQuery.set('sort', sort);
  if (order) apiQuery.set('order', order);
  if (scoreColumns.length) apiQuery.set('scores', scoreColumns.join(','));
  if (cursor) apiQuery.set('cursor', cursor);
  const base = `/api/projects/${enc(projectId)}/executions`;
  const list = useApi<ExecutionList>(`${base}?${apiQuery}`);

  // Marks when the rows are in the DOM (`npm run bench console` reads it).
  useLayoutEffect(() => {
    if (list.data) performance.mark('traceloom:executions-rendered');
  }, [list.data]);

  const trailKey = `${projectId}?${filters}&limit=${limit}&sort=${sort}&order=${order}`;
  const trail = cursorTrail.get(trailKey) ?? [];
  const next = (nextCursor: string) => {
    cursorTrail.set(trailKey, [...trail, cursor]);
    navigate(withParams(loc, { cursor: nextCursor }));
  };
  const previous = () => {
    const back = trail.slice(0, -1);
    cursorTrail.set(trailKey, back);
    navigate(withParams(loc, { cursor: trail[trail.length - 1] ?? null }));
  };

  return (
    <>
      <header class="page">
        <h1>Executions</h1>
        <ExportButtons path={`${base}/export`} filters={filters} />
      </header>
      <FilterBar
        projectId={projectId}
        filters={filters}
        onApply={(f) =>
          navigate(
            withParams(
              { path: loc.path, params: f },
              { limit: limit === '50' ? null : limit, sort, order, columns: loc.params.get('columns') },
            ),
          )
        }
      />
      <Load state={list} label="Loading executions…">
        {(data) =>
          data.items.length === 0 && !cursor ? (
            [...filters.keys()].length > 0 ? (
              <Empty title="No execution matches these filters">
                <p>Widen the time window or remove a filter.</p>
                <button type="button" onClick={() => navigate(loc.path)}>
                  Clear the filters
                </button>
              </Empty>
            ) : (
              <NoExecutionsYet />
            )
          ) : (
            <Card>
              <div class="table-head">
                <span>
                  <strong>{int(data.total)}</strong> execution{data.total === 1 ? '' : 's'}{' '}
                  {sort && sort !== 'started_at' && !filters.get('start') && (
                    <span class="muted" title="An order by value reads every matching execution of the window: a window reads less">
                      {' '}
                      · ordered over all time
                    </span>
                  )}{' '}
                  {list.loading && <span class="muted">· refreshing…</span>}
                </span>
                <span class="pager">
                  <label>
                    Rows{' '}
                    <select
                      name="limit"
                      value={limit}
                      onChange={(e) => navigate(withParams(loc, { limit: (e.target as HTMLSelectElement).value, cursor: null }))}
                    >
                      {['25', '50', '100', '200'].map((n) => (
                        <option value={n}>{n}</option>
                      ))}
                    </select>
                  </label>
                  <button type="button" disabled={!cursor} onClick={previous}>
                    ← Previous
                  </button>
                  <button type="button" disabled={!data.next_cursor} onClick={() => data.next_cursor && next(data.next_cursor)}>
                    Next →
                  </button>
                </span>
              </div>
              <ScoreColumns projectId={projectId} />
              <ExecutionTable projectId={projectId} items={data.items} scoreColumns={scoreColumns} />
            </Card>
          )
        }
      </Load>
    </>
  );
}

function ExecutionTable({ projectId, items, scoreColumns }: { projectId: string; items: ListedExecution[]; scoreColumns: string[] }) {
  const loc = useLocation();
  const key = (loc.params.get('sort') || 'started_at') as SortKey;
  const desc = loc.params.get('order') !== 'asc';
  const rows = items;
  // The key column only when a row of the page was sent with a key (none in a dev setup without keys).
  const withKeys = rows.some((e) => e.api_key_id);
  const hrefs = rows.map((e) => `/projects/${enc(projectId)}/executions/${enc(e.trace_id)}`);
  const selected = useListKeys(hrefs);
  // The server orders every matching execution; a click walks desc → asc → back to newest first.
  const th = (k: SortKey, label: ComponentChildren, cls = '') => {
    const on = key === k;
    // Time: newest first is the default (no parameter), oldest first order=asc.
    const next =
      k === 'started_at'
        ? { sort: null, order: on && desc ? 'asc' : null }
        : { sort: on && !desc ? null : k, order: on && desc ? 'asc' : null };
    return (
      <th class={`sortable ${cls}`} aria-sort={on ? (desc ? 'descending' : 'ascending') : 'none'} data-sort={k}>
        <button
          type="button"
          class="link"
          title="Orders every matching execution (not only this page)"
          onClick={() => navigate(withParams(loc, { ...next, cursor: null }))}
        >
          {label} {on ? (desc ? '▼' : '▲') : ''}
        </button>
      </th>
    );
  };
  return (
    <TableScroll label="Executions">
      <table class="executions">
        <thead>
          <tr>
            {th(
              'started_at',
              <>
                Started <Zone />
              </>,
            )}
            <th>Agent</th>
            <th>User</th>
            {withKeys && <th>API key</th>}
            <th>Provider / model</th>
            <th>Status</th>
            {th('tokens', 'Tokens in / out', 'num')}
            {th('latency_ms', 'Latency', 'num')}
            {th('cost_usd', 'Cost', 'num')}
            {scoreColumns.map((n) => (
              <th class="num score-col" data-score-column={n}>
                {n}
              </th>
            ))}
            <th class="num">Templates</th>
            <th class="num">Spans</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((e, i) => {
            const href = hrefs[i]!;
            return (
              <tr
                key={e.trace_id}
                data-trace-id={e.trace_id}
                class={`clickable ${i === selected ? 'selected' : ''}`}
                onClick={(ev) => !(ev.target as HTMLElement).closest('a') && navigate(href)}
              >
                <td>
                  <Link href={href} title={e.trace_id}>
                    <Time iso={e.started_at} bare />
                  </Link>
                </td>
                <td>
                  {e.agent_id || <span class="muted">—</span>}
                  {e.tags.map((t) => (
                    <Badge kind="tag">{t}</Badge>
                  ))}
                </td>
                <td>
                  {e.user_id ? (
                    <Link href={`/projects/${enc(projectId)}/executions?user_id=${enc(e.user_id)}`}>{e.user_id}</Link>
                  ) : (
                    <span class="muted">—</span>
                  )}
                  {e.session_id && (
                    <Link href={`/projects/${enc(projectId)}/sessions/${enc(e.session_id)}`} title={`session ${e.session_id}`}>
                      {' '}
                      ↳ session
                    </Link>
                  )}
                </td>
                {withKeys && (
                  <td data-api-key={e.api_key_id ?? ''}>
                    <KeyCell projectId={projectId} id={e.api_key_id} name={e.api_key_name} />
                  </td>
                )}
                <td>
                  <span class="muted">{e.provider || '—'}</span> {e.model || '—'}
                </td>
                <td>
                  <Badge kind={e.status === 'ok' ? 'ok' : 'bad'}>{e.status}</Badge>
                </td>
                <td class="num">
                  {int(e.tokens_in)} / {int(e.tokens_out)}
                </td>
                <td class="num">{duration(e.latency_ms)}</td>
                <td class="num" title={`${e.cost_usd} USD (${e.cost_source})`}>
                  {e.cost_source === 'unpriced' ? <Badge kind="warn">unpriced</Badge> : usd(e.cost_usd)}
                </td>
                {scoreColumns.map((n) => (
                  <td class="num score-col" data-score={n}>
                    <ScoreValue value={e.scores?.[n] ?? null} />
                  </td>
                ))}
                <td class="num">{e.template_count || ''}</td>
                <td class="num">{e.span_count}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** The key that sent a row by name (its id on hover), a link to the rows it sent (the api_key_id filter). */
function KeyCell({ projectId, id, name }: { projectId: string; id: string | null; name: string | null }) {
  if (!id) return <span class="muted">—</span>;
  return (
    <Link href={`/projects/${enc(projectId)}/executions?api_key_id=${enc(id)}`} title={`key ${id}`}>
      {name ?? <span class="muted">a deleted key</span>}
    </Link>
  );
}

function ScoreValue({ value }: { value: number | boolean | string | null }) {
  if (value === null) return <span class="muted">—</span>;
  if (typeof value === 'number') return <>{Number.isInteger(value) ? value : value.toFixed(3)}</>;
  if (typeof value === 'boolean') return <Badge kind={value ? 'ok' : 'bad'}>{String(value)}</Badge>;
  return <Badge>{value}</Badge>;
}

function NoExecutionsYet() {
  const endpoint = `${location.origin}/api`;
  return (
    <Empty title="No executions yet">
      <p>Point any OpenTelemetry exporter (OTLP/HTTP) at this service, with an API key of this project:</p>
      <pre>{`export OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}   # the exporter appends /v1/traces
export OTEL_EXPORTER_OTLP_HEADERS=x-api-key=tl_...`}</pre>
      <p>
        Spans of generative-AI calls become executions here within seconds. You can also record one directly with{' '}
        <code>POST /api/projects/&lt;project&gt;/executions</code> (see <a href="/api/openapi.json">the API document</a>).
      </p>
    </Empty>
  );
}
