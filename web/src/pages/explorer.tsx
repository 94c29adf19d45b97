// The spend explorer: GET .../spend with any group_by dimensions, a time bucket, a filter for every
// dimension and a window. The page's query string IS the API's query (shareable; the table is the
// API's answer for it), the chart is the same query grouped by time and one dimension (or all of
// them combined), and the CSV is the table.
import { useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { enc, saveBlob } from '../api.ts';
import { StackedTimeChart, type Granularity, type StackedSeries } from '../charts.tsx';
import { csvField, fromLocalInput, int, toLocalInput, usdText, utc } from '../format.ts';
import { navigate, useLocation } from '../router.tsx';
import type { SpendBreakdown, SpendMeasures, SpendRow } from '../types.ts';
import { ApplyReset, Badge, Card, Empty, Form, Load, TableScroll, Time, useApi, Zone } from '../ui.tsx';
import { Unpriced } from '../unpriced.tsx';

/** group_by name → its filter parameter (docs/spend.md, "Breakdowns"). */
export const DIMENSIONS: Array<[string, string, string]> = [
  ['model', 'model', 'Model'],
  ['provider', 'provider', 'Provider'],
  ['agent', 'agent_id', 'Agent'],
  ['user', 'user_id', 'User'],
  ['session', 'session_id', 'Session'],
  ['tag', 'tag', 'Tag'],
  ['prompt', 'prompt_id', 'Prompt'],
  ['api_key', 'api_key_id', 'API key'],
];
const TIME = new Set(['time', 'hour', 'day', 'week', 'month']);
const BUCKETS = ['hour', 'day', 'week', 'month'];
const WINDOWS = ['24h', '7d', '30d', '90d'];
const TOP = 8;
/** The chart_by choice that stacks every group_by dimension combined. */
const COMBINED = '*';
const MEASURES = ['cost_usd', 'executions', 'tokens_in', 'tokens_out', 'unpriced_executions'] as const;

const groupsOf = (q: URLSearchParams) =>
  q
    .getAll('group_by')
    .flatMap((g) => g.split(','))
    .map((g) => g.trim())
    .filter(Boolean);
const label = (v: string | number | undefined) => (v === '' || v === undefined ? '(none)' : String(v));

export function Explorer({ projectId }: { projectId: string }) {
  const loc = useLocation();
  const q = loc.params;
  const dims = groupsOf(q);
  const bucket = (BUCKETS.includes(q.get('granularity') ?? '') ? q.get('granularity') : 'day') as Granularity;
  const base = `/api/projects/${enc(projectId)}/spend`;
  const table = useApi<SpendBreakdown>(`${base}?${q}`);
  const groups = dims.filter((d) => !TIME.has(d));
  // What the chart stacks: one dimension (default the first), or every dimension combined. With
  // several dimensions (model × user) the combinations are many and the top 8 of them would leave
  // most of the spend in "other": one dimension ranks its own values instead. Console state only:
  // the URL stays the API's query.
  const [chartPick, setChartPick] = useState<string | undefined>();
  const chartBy = chartPick !== undefined && (chartPick === COMBINED || groups.includes(chartPick)) ? chartPick : (groups[0] ?? COMBINED);
  const chartGroups = chartBy === COMBINED ? groups : [chartBy];
  const chartQuery = useMemo(() => {
    const c = new URLSearchParams(q);
    if (chartGroups.length > 5) return null;
    c.set('group_by', ['time', ...chartGroups].join(','));
    c.set('granularity', bucket);
    c.set('limit', '10000');
    return c;
  }, [q.toString(), chartGroups.join(',')]);
  const chart = useApi<SpendBreakdown>(chartQuery ? `${base}?${chartQuery}` : null);

  // Marks when the table is in the DOM (`npm run bench console` reads it).
  useLayoutEffect(() => {
    if (table.data) performance.mark('traceloom:explorer-rendered');
  }, [table.data]);

  const go = (next: URLSearchParams) => navigate(`${loc.path}${next.toString() ? `?${next}` : ''}`);
  return (
    <>
      <header class="page">
        <h1>Spend explorer</h1>
        {table.data && (
          <button type="button" onClick={() => exportCsv(projectId, table.data!)}>
            Export CSV
          </button>
        )}
      </header>
      <ExplorerForm key={q.toString()} query={q} onApply={go} />
      <Load state={table} label="Loading the breakdown…">
        {(data) =>
          data.total.executions === 0 && data.rows.length === 0 ? (
            <Empty title="No spend matches this query">
              <p>Widen the window (try 90 days) or remove a filter; spend appears as executions arrive.</p>
            </Empty>
          ) : (
            <>
              <Card
                title={`Cost by ${bucket}${chartGroups.length ? ` — top ${TOP} ${chartBy === COMBINED ? 'groups' : `${chartBy} values`}` : ''}`}
                actions={
                  groups.length > 1 && (
                    <label>
                      Chart by{' '}
                      <select name="chart_by" value={chartBy} onChange={(e) => setChartPick((e.target as HTMLSelectElement).value)}>
                        {groups.map((g) => (
                          <option value={g}>{g}</option>
                        ))}
                        <option value={COMBINED}>{groups.join(' × ')} (combined)</option>
                      </select>
                    </label>
                  )
                }
              >
                {chart.data ? (
                  <StackedTimeChart {...seriesOf(chart.data)} granularity={bucket} />
                ) : chart.error ? (
                  <p class="muted">{chart.error.detail}</p>
                ) : (
                  <p class="muted">{chartQuery ? 'Loading the chart…' : 'Too many dimensions to chart (at most 5 besides time).'}</p>
                )}
              </Card>
              <Card>
                <div class="table-head">
                  <span>
                    <strong>{int(data.groups)}</strong> group{data.groups === 1 ? '' : 's'} · <Time iso={data.start} /> to{' '}
                    <Time iso={data.end} /> · read from {data.source}
                  </span>
                </div>
                <BreakdownTable data={data} projectId={projectId} />
              </Card>
            </>
          )
        }
      </Load>
    </>
  );
}

/** The dimension columns of a breakdown (the API's group_by names, as in each row). */
const columnsOf = (data: SpendBreakdown) => data.group_by;

function BreakdownTable({ data, projectId }: { data: SpendBreakdown; projectId: string }) {
  const cols = columnsOf(data);
  const cells = (m: SpendMeasures) => [
    <td class="num cost">
      {m.executions > 0 && m.unpriced_executions >= m.executions && Number(m.cost_usd) === 0 ? (
        <Unpriced projectId={projectId} />
      ) : (
        usdText(m.cost_usd)
      )}
    </td>,
    <td class="num">{int(m.executions)}</td>,
    <td class="num">{int(m.tokens_in)}</td>,
    <td class="num">{int(m.tokens_out)}</td>,
    <td class="num">{m.unpriced_executions > 0 ? <Badge kind="warn">{int(m.unpriced_executions)}</Badge> : '0'}</td>,
  ];
  return (
    <TableScroll label="Spend breakdown">
      <table class="breakdown">
        <thead>
          <tr>
            {cols.map((c) => (
              <th>
                {c}
                {TIME.has(c) && bucketOf(c, data) === 'hour' && (
                  <>
                    {' '}
                    <Zone />
                  </>
                )}
                {TIME.has(c) && bucketOf(c, data) !== 'hour' && <span class="zone"> (UTC {bucketOf(c, data)})</span>}
              </th>
            ))}
            <th class="num">Cost</th>
            <th class="num">Executions</th>
            <th class="num">Tokens in</th>
            <th class="num">Tokens out</th>
            <th class="num">Unpriced</th>
          </tr>
        </thead>
        <tbody>
          {data.rows.map((r) => (
            <tr data-row>
              {cols.map((c) => (
                <td>{TIME.has(c) ? <Bucket iso={String(r[c])} granularity={bucketOf(c, data)} /> : label(r[c])}</td>
              ))}
              {cells(r)}
            </tr>
          ))}
          {data.other && (
            <tr data-other class="other">
              <td colSpan={Math.max(cols.length, 1)}>other ({int(data.other.groups)} groups)</td>
              {cells(data.other)}
            </tr>
          )}
        </tbody>
        <tfoot>
          <tr data-total>
            <td colSpan={Math.max(cols.length, 1)}>total (each execution once)</td>
            {cells(data.total)}
          </tr>
        </tfoot>
      </table>
    </TableScroll>
  );
}

/** The bucket of a time column: its own name (hour, day, week, month), or the query's granularity for `time`. */
const bucketOf = (column: string, data: SpendBreakdown) => (column === 'time' ? (data.granularity ?? 'day') : column);

/** A time bucket: an hour on the console's clock; a day, week or month is a UTC one (the API's), shown as its UTC date. */
function Bucket({ iso, granularity }: { iso: string; granularity: string }) {
  if (granularity === 'hour') return <Time iso={iso} bare />;
  return <time dateTime={iso}>{utc(iso).slice(0, granularity === 'month' ? 7 : 10)}</time>;
}

/** The table as CSV: its rows, `other` and the total, figures as the API sent them. */
function exportCsv(projectId: string, data: SpendBreakdown) {
  const cols = columnsOf(data);
  const line = (values: unknown[]) => values.map(csvField).join(',');
  const measures = (m: SpendMeasures) => MEASURES.map((k) => m[k]);
  const lines = [
    line([...cols, ...MEASURES]),
    ...data.rows.map((r) => line([...cols.map((c) => r[c]), ...measures(r)])),
    ...(data.other ? [line([...cols.map((_, i) => (i === 0 ? 'other' : '')), ...measures(data.other)])] : []),
    line([...cols.map((_, i) => (i === 0 ? 'total' : '')), ...measures(data.total)]),
  ];
  saveBlob(`spend-${projectId}.csv`, new Blob([`${lines.join('\r\n')}\r\n`], { type: 'text/csv' }));
}

/**
 * The chart's series: the groups of the chart's own answer (time × the charted dimension) ranked by
 * their cost over the window, the top 8 drawn, the rest summed as "other (N more groups)". Floats:
 * drawing only, the table has the exact figures.
 */
function seriesOf(chart: SpendBreakdown): { buckets: number[]; series: StackedSeries[] } {
  const groups = chart.group_by.filter((g) => !TIME.has(g));
  const key = (r: SpendRow) => groups.map((g) => label(r[g])).join(' · ') || 'total';
  const totals = new Map<string, number>();
  for (const r of chart.rows) totals.set(key(r), (totals.get(key(r)) ?? 0) + Number(r.cost_usd));
  const ranked = [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k]) => k);
  const top = new Set(ranked.slice(0, TOP));
  const rest = ranked.length - top.size;
  const other = `other (${rest} more group${rest === 1 ? '' : 's'})`;
  const bucketKeys = [...new Set(chart.rows.map((r) => String(r.time)))].sort();
  const index = new Map(bucketKeys.map((b, i) => [b, i]));
  const byGroup = new Map<string, number[]>();
  for (const r of chart.rows) {
    const k = top.has(key(r)) ? key(r) : other;
    const values = byGroup.get(k) ?? bucketKeys.map(() => 0);
    values[index.get(String(r.time))!]! += Number(r.cost_usd);
    byGroup.set(k, values);
  }
  const order = [...ranked.filter((k) => top.has(k)), ...(rest > 0 ? [other] : [])];
  return {
    buckets: bucketKeys.map((b) => Date.parse(b) / 1000),
    series: order.map((k) => ({ label: k, values: byGroup.get(k)! })),
  };
}

function ExplorerForm({ query, onApply }: { query: URLSearchParams; onApply(q: URLSearchParams): void }) {
  const [draft, setDraft] = useState(() => new URLSearchParams(query));
  const [metaKey, setMetaKey] = useState('');
  const dims = groupsOf(draft);
  const update = (change: (q: URLSearchParams) => void, apply = false) => {
    const next = new URLSearchParams(draft);
    change(next);
    setDraft(next);
    if (apply) onApply(next);
  };
  const setOne = (k: string, v: string) => update((q) => (v ? q.set(k, v) : q.delete(k)));
  const toggle = (dim: string) =>
    update((q) => {
      const next = dims.includes(dim) ? dims.filter((d) => d !== dim) : [...dims, dim];
      if (next.length) q.set('group_by', next.join(','));
      else q.delete('group_by');
    });
  const setTime = (k: 'start' | 'end', v: string) =>
    update((q) => {
      q.delete('window');
      if (v) q.set(k, fromLocalInput(v));
      else q.delete(k);
    });
  const metadata = [...draft.keys()].filter((k) => k.startsWith('metadata.'));
  const windowPreset = (w: string) =>
    update((q) => {
      q.set('window', w);
      q.delete('start');
      q.delete('end');
    }, true);
  return (
    <Form class="filters card explorer-form" onSubmit={() => onApply(draft)}>
      <fieldset class="group-by">
        <legend>Group by</legend>
        {DIMENSIONS.map(([dim, , title]) => (
          <label class="check">
            <input type="checkbox" name={`group_${dim}`} checked={dims.includes(dim)} onChange={() => toggle(dim)} /> {title}
          </label>
        ))}
        {dims
          .filter((d) => d.startsWith('metadata.'))
          .map((d) => (
            <label class="check">
              <input type="checkbox" checked onChange={() => toggle(d)} /> {d}
            </label>
          ))}
        <span class="inline">
          <input
            name="group_metadata"
            placeholder="metadata key"
            value={metaKey}
            onInput={(e) => setMetaKey((e.target as HTMLInputElement).value)}
          />
          <button type="button" disabled={!metaKey.trim()} onClick={() => (toggle(`metadata.${metaKey.trim()}`), setMetaKey(''))}>
            + metadata
          </button>
        </span>
      </fieldset>
      <label>
        Time bucket
        <select
          name="granularity"
          value={draft.get('granularity') ?? 'day'}
          onChange={(e) => setOne('granularity', (e.target as HTMLSelectElement).value)}
        >
          {BUCKETS.map((b) => (
            <option value={b}>{b}</option>
          ))}
        </select>
      </label>
      {DIMENSIONS.map(([, param, title]) => (
        <label>
          {title}
          <input
            name={param}
            placeholder="any"
            value={draft.getAll(param).join(',')}
            onInput={(e) => setOne(param, (e.target as HTMLInputElement).value)}
          />
        </label>
      ))}
      <label>
        Metadata (key=value)
        <input
          name="metadata"
          placeholder="plan=pro"
          value={metadata.map((k) => `${k.slice(9)}=${draft.get(k)}`).join(' ')}
          onChange={(e) =>
            update((q) => {
              for (const k of metadata) q.delete(k);
              for (const pair of (e.target as HTMLInputElement).value.split(/\s+/).filter(Boolean)) {
                const at = pair.indexOf('=');
                if (at > 0) q.set(`metadata.${pair.slice(0, at)}`, pair.slice(at + 1));
              }
            })
          }
        />
      </label>
      <label>
        <span>
          From <Zone />
        </span>
        <input
          name="start"
          type="datetime-local"
          value={toLocalInput(draft.get('start'))}
          onInput={(e) => setTime('start', (e.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        <span>
          To <Zone />
        </span>
        <input
          name="end"
          type="datetime-local"
          value={toLocalInput(draft.get('end'))}
          onInput={(e) => setTime('end', (e.target as HTMLInputElement).value)}
        />
      </label>
      <div class="windows">
        Last
        {WINDOWS.map((w) => (
          <button type="button" class={draft.get('window') === w ? 'active' : ''} onClick={() => windowPreset(w)}>
            {w}
          </button>
        ))}
      </div>
      <ApplyReset onReset={() => (setDraft(new URLSearchParams()), onApply(new URLSearchParams()))} />
    </Form>
  );
}
