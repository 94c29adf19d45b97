// Executions: the filtered list (GET .../executions), keyset pages by next_cursor, export. The
// query string of the page is the API's own query (plus `sort`), so a link keeps the filters,
// score filters included (`score.<name>.gte|lte|eq`, `has_score`: score-filter.tsx) and metadata
// (`metadata.<key>=<value>`). j / k and Enter walk the rows (keys.ts).
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { enc } from '../api.ts';
import { duration, fromLocalInput, int, local, toLocalInput, usd, utc } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { ExecutionList, ExecutionListItem } from '../types.ts';
import { Badge, Card, Empty, Form, Load, useApi } from '../ui.tsx';
import { ExportButtons } from './export.tsx';
import { useListKeys } from '../keys.ts';

const isMetadata = (k: string) => k.startsWith('metadata.');
import { emptyDraft, isScoreFilter, ScoreFilters, withDraft } from './score-filter.tsx';

export const FILTERS = [
  'provider',
  'model',
  'agent_id',
  'status',
  'min_cost',
  'max_cost',
  'start',
  'end',
  'has_templates',
  'prompt_id',
  'prompt_version',
  'prompt_label',
  'user_id',
  'session_id',
  'tag',
  'api_key_id',
] as const;
type Filter = (typeof FILTERS)[number];

const WINDOWS: Array<[string, number]> = [
  ['1 h', 3_600_000],
  ['24 h', 86_400_000],
  ['7 d', 7 * 86_400_000],
  ['30 d', 30 * 86_400_000],
];

type SortKey = 'started_at' | 'latency_ms' | 'cost_usd' | 'tokens' | 'model' | 'agent_id';
const sortValue = (e: ExecutionListItem, k: SortKey): number | string =>
  k === 'tokens' ? e.tokens_in + e.tokens_out : k === 'started_at' ? Date.parse(e.started_at) : e[k];

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
    for (const [k, v] of loc.params) if (v && (isScoreFilter(k) || isMetadata(k))) f.append(k, v);
    return f;
  }, [loc.params.toString()]);
  const cursor = loc.params.get('cursor') ?? '';
  const limit = loc.params.get('limit') ?? '50';
  const apiQuery = new URLSearchParams(filters);
  apiQuery.set('limit', limit);
  if (cursor) apiQuery.set('cursor', cursor);
  const base = `/api/projects/${enc(projectId)}/executions`;
  const list = useApi<ExecutionList>(`${base}?${apiQuery}`);

  // Marks when the rows are in the DOM (`npm run bench console` reads it).
  useLayoutEffect(() => {
    if (list.data) performance.mark('traceloom:executions-rendered');
  }, [list.data]);

  const trailKey = `${projectId}?${filters}&limit=${limit}`;
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
          navigate(withParams({ path: loc.path, params: f }, { limit: limit === '50' ? null : limit, sort: loc.params.get('sort') }))
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
                  {list.loading && <span class="muted">· refreshing…</span>}
                </span>
                <span class="pager">
                  <label>
                    Rows{' '}
                    <select
                      value={limit}
                      onChange={(e) => navigate(withParams(loc, { limit: (e.target as HTMLSelectElement).value, cursor: null }))}
                    >
                      {['25', '50', '100', '200'].map((n) => (
                        <option value={n}>{n}</option>
                      ))}
                    </select>
                  </label>
                  <button type="button" disabled={!cursor} onClick={previous}>
                    ← Newer
                  </button>
                  <button type="button" disabled={!data.next_cursor} onClick={() => data.next_cursor && next(data.next_cursor)}>
                    Older →
                  </button>
                </span>
              </div>
              <ExecutionTable projectId={projectId} items={data.items} />
            </Card>
          )
        }
      </Load>
    </>
  );
}

function ExecutionTable({ projectId, items }: { projectId: string; items: ExecutionListItem[] }) {
  const loc = useLocation();
  const sort = loc.params.get('sort') ?? '';
  const key = sort.replace(/^-/, '') as SortKey;
  const rows = useMemo(() => {
    if (!key) return items;
    const dir = sort.startsWith('-') ? -1 : 1;
    return [...items].sort((a, b) => {
      const x = sortValue(a, key);
      const y = sortValue(b, key);
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
  }, [items, sort]);
  const hrefs = rows.map((e) => `/projects/${enc(projectId)}/executions/${enc(e.trace_id)}`);
  const selected = useListKeys(hrefs);
  const th = (k: SortKey, label: string, cls = '') => {
    const on = key === k;
    const nextSort = on && !sort.startsWith('-') ? `-${k}` : on ? null : k;
    return (
      <th class={`sortable ${cls}`} aria-sort={on ? (sort.startsWith('-') ? 'descending' : 'ascending') : 'none'}>
        <button
          type="button"
          class="link"
          title="Sorts the rows of this page (the API lists newest first)"
          onClick={() => navigate(withParams(loc, { sort: nextSort }), { replace: true })}
        >
          {label} {on ? (sort.startsWith('-') ? '▼' : '▲') : ''}
        </button>
      </th>
    );
  };
  return (
    <div class="scroll">
      <table class="executions">
        <thead>
          <tr>
            {th('started_at', 'Started')}
            {th('agent_id', 'Agent')}
            <th>User</th>
            {th('model', 'Provider / model')}
            <th>Status</th>
            {th('tokens', 'Tokens in / out', 'num')}
            {th('latency_ms', 'Latency', 'num')}
            {th('cost_usd', 'Cost', 'num')}
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
                  <Link href={href} title={`${e.trace_id} · ${utc(e.started_at)} UTC`}>
                    {local(e.started_at)}
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
                <td class="num">{e.template_count || ''}</td>
                <td class="num">{e.span_count}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function FilterBar({ projectId, filters, onApply }: { projectId: string; filters: URLSearchParams; onApply(f: URLSearchParams): void }) {
  const initial = () => Object.fromEntries(FILTERS.map((k) => [k, filters.get(k) ?? ''])) as Record<Filter, string>;
  const initialScores = () => [...filters].filter(([k]) => isScoreFilter(k));
  const initialMetadata = () =>
    [...filters]
      .filter(([k]) => isMetadata(k))
      .map(([k, v]) => `${k.slice('metadata.'.length)}=${v}`)
      .join(' ');
  const [metadata, setMetadata] = useState(initialMetadata);
  const [f, setF] = useState(initial);
  const [scores, setScores] = useState(initialScores);
  const [draft, setDraft] = useState(emptyDraft);
  useEffect(() => {
    setF(initial());
    setScores(initialScores());
    setMetadata(initialMetadata());
    setDraft(emptyDraft);
  }, [filters.toString()]);
  const set = (k: Filter) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const apply = (over: Partial<Record<Filter, string>> = {}, scoreParams = withDraft(scores, draft)) => {
    const q = new URLSearchParams(Object.entries({ ...f, ...over }).filter(([, v]) => v !== ''));
    for (const pair of metadata.split(/\s+/).filter(Boolean)) {
      const at = pair.indexOf('=');
      if (at > 0) q.set(`metadata.${pair.slice(0, at)}`, pair.slice(at + 1));
    }
    for (const [k, v] of scoreParams) q.append(k, v);
    onApply(q);
  };
  return (
    <Form class="filters card" onSubmit={() => apply()}>
      <label>
        Provider
        <input name="provider" placeholder="openai, anthropic" value={f.provider} onInput={set('provider')} />
      </label>
      <label>
        Model
        <input name="model" placeholder="gpt-4o" value={f.model} onInput={set('model')} />
      </label>
      <label>
        Agent
        <input name="agent_id" value={f.agent_id} onInput={set('agent_id')} />
      </label>
      <label>
        Status
        <select name="status" value={f.status} onChange={set('status')}>
          <option value="">any</option>
          <option value="ok">ok</option>
          <option value="error">error</option>
        </select>
      </label>
      <label>
        Cost from ($)
        <input name="min_cost" type="number" min="0" step="any" value={f.min_cost} onInput={set('min_cost')} />
      </label>
      <label>
        to ($)
        <input name="max_cost" type="number" min="0" step="any" value={f.max_cost} onInput={set('max_cost')} />
      </label>
      <label>
        Templates
        <select name="has_templates" value={f.has_templates} onChange={set('has_templates')}>
          <option value="">any</option>
          <option value="true">with templates</option>
          <option value="false">without</option>
        </select>
      </label>
      <label>
        Prompt
        <input name="prompt_id" value={f.prompt_id} onInput={set('prompt_id')} />
      </label>
      <label>
        Prompt version
        <input name="prompt_version" type="number" min="1" step="1" value={f.prompt_version} onInput={set('prompt_version')} />
      </label>
      <label>
        Prompt label
        <input name="prompt_label" placeholder="production" value={f.prompt_label} onInput={set('prompt_label')} />
      </label>
      <label>
        User
        <input name="user_id" value={f.user_id} onInput={set('user_id')} />
      </label>
      <label>
        Session
        <input name="session_id" value={f.session_id} onInput={set('session_id')} />
      </label>
      <label>
        Tag
        <input name="tag" value={f.tag} onInput={set('tag')} />
      </label>
      <label>
        API key id
        <input name="api_key_id" value={f.api_key_id} onInput={set('api_key_id')} />
      </label>
      <label>
        Metadata (key=value)
        <input name="metadata" placeholder="plan=pro" value={metadata} onInput={(e) => setMetadata((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        From (UTC)
        <input
          name="start"
          type="datetime-local"
          value={toLocalInput(f.start)}
          onInput={(e) => setF({ ...f, start: fromLocalInput((e.target as HTMLInputElement).value) })}
        />
      </label>
      <label>
        To (UTC)
        <input
          name="end"
          type="datetime-local"
          value={toLocalInput(f.end)}
          onInput={(e) => setF({ ...f, end: fromLocalInput((e.target as HTMLInputElement).value) })}
        />
      </label>
      <div class="windows">
        Last
        {WINDOWS.map(([label, ms]) => (
          <button type="button" onClick={() => apply({ start: new Date(Date.now() - ms).toISOString().slice(0, 16) + ':00Z', end: '' })}>
            {label}
          </button>
        ))}
      </div>
      <ScoreFilters projectId={projectId} params={scores} draft={draft} onDraft={setDraft} onApply={(p) => apply({}, p)} />
      <div class="apply">
        <button type="submit" class="primary">
          Apply
        </button>
        <button type="button" onClick={() => onApply(new URLSearchParams())}>
          Reset
        </button>
      </div>
    </Form>
  );
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
