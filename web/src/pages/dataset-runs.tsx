// A dataset's experiment runs (docs/datasets.md): the runs table (pick two to compare: run-compare.tsx)
// and one run's answer (per item: its execution, output, cost, latency and scores; the totals).
// Figures come from the API (money and statistics are never recomputed here) and are shown with the
// console's helpers (format.ts): durations, rates as percentages, means as figures.
import { useState } from 'preact/hooks';
import { enc, query } from '../api.ts';
import { duration, figure, int, interval, rate, text } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { DatasetRun, DatasetRunItem, DatasetRunList, DatasetRunResult, DatasetRunTotals, GroupScore } from '../types.ts';
import { Badge, Card, Empty, Load, Time, useApi } from '../ui.tsx';

const LIMIT = 100;

/** Dollars as the API sent them (never re-rounded), the sign before the dollar. */
export const dollars = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : v < 0 ? `−$${-v}` : `$${v}`);
/** Longer than this (characters or lines), a JSON cell shows its start and a toggle for the rest. */
const LONG_CHARS = 600;
const LONG_LINES = 12;

/** Any JSON value of an item (input, expected output, output): text as is, the rest indented; '—' for none; long text collapsible. */
export function JsonCell({ value, field }: { value: unknown; field?: string }) {
  const [open, setOpen] = useState(false);
  if (value === null || value === undefined || value === '')
    return (
      <span class="muted" data-field={field}>
        —
      </span>
    );
  const t = text(value);
  const lines = t.split('\n').length;
  const long = t.length > LONG_CHARS || lines > LONG_LINES;
  return (
    <div class={`cell-wrap${long && !open ? ' collapsed' : ''}`}>
      <pre class="cell" data-field={field} tabIndex={0}>
        {t}
      </pre>
      {long && (
        <button type="button" class="link small toggle-cell" onClick={() => setOpen(!open)}>
          {open ? 'show less' : `show all (${int(t.length)} characters, ${int(lines)} lines)`}
        </button>
      )}
    </div>
  );
}

export function Runs({ projectId, base }: { projectId: string; base: string }) {
  const loc = useLocation();
  const runs = useApi<DatasetRunList>(`${base}/runs${query({ limit: LIMIT })}`);
  const [picked, setPicked] = useState<string[]>([]);
  const toggle = (id: string, on: boolean) =>
    setPicked((p) => (on ? [...p.filter((x) => x !== id), id].slice(-2) : p.filter((x) => x !== id)));
  return (
    <Load state={runs} label="Loading runs…">
      {(page) =>
        page.items.length === 0 ? (
          <Empty title="No runs yet">
            <p>
              Start a run (its name, the prompt versions and model it tests), run your code on the items, and link each item to the
              execution it produced — by API, or with the span attributes <code>traceloom.dataset.run_id</code> and{' '}
              <code>traceloom.dataset.item_id</code>:
            </p>
            <pre>{`curl -X POST ${location.origin}${base}/runs \\
  -H 'X-API-Key: tl_...' -H 'Content-Type: application/json' -d '{"name":"v8 on gpt-4o"}'`}</pre>
          </Empty>
        ) : (
          <Card
            title="Runs"
            actions={
              <button
                type="button"
                class="primary compare-runs"
                disabled={picked.length !== 2}
                onClick={() => navigate(withParams(loc, { compare: picked.join(','), run: null }))}
              >
                Compare the two selected
              </button>
            }
          >
            <table class="runs">
              <thead>
                <tr>
                  <th />
                  <th>Run</th>
                  <th>Model</th>
                  <th>Prompts</th>
                  <th>Started</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((r) => (
                  <tr data-run={r.name}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`compare ${r.name}`}
                        checked={picked.includes(r.run_id)}
                        onChange={(e) => toggle(r.run_id, (e.target as HTMLInputElement).checked)}
                      />
                    </td>
                    <td>
                      <Link href={withParams(loc, { run: r.run_id, compare: null })}>{r.name}</Link>
                      {r.description && <div class="muted small">{r.description}</div>}
                    </td>
                    <td>{r.model ?? '—'}</td>
                    <td>
                      <RunPrompts projectId={projectId} run={r} />
                    </td>
                    <td>
                      <Time iso={r.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {picked.length !== 2 && <p class="muted small">Tick two runs to compare them item by item.</p>}
          </Card>
        )
      }
    </Load>
  );
}

function RunPrompts({ projectId, run }: { projectId: string; run: DatasetRun }) {
  if (run.prompts.length === 0) return <>—</>;
  return (
    <>
      {run.prompts.map((p) => (
        <Link href={`/projects/${enc(projectId)}/prompts/${enc(p.prompt_id)}?version=${p.version}`}>
          <Badge kind="label">
            {p.prompt_id} v{p.version}
          </Badge>
        </Link>
      ))}
    </>
  );
}

export const back = (loc: ReturnType<typeof useLocation>) => (
  <Link href={withParams(loc, { run: null, compare: null, tab: 'runs' })} class="back">
    ← Runs
  </Link>
);

export function RunResult({ projectId, base, runId }: { projectId: string; base: string; runId: string }) {
  const loc = useLocation();
  const run = useApi<DatasetRunResult>(`${base}/runs/${enc(runId)}${query({ limit: LIMIT })}`);
  return (
    <Load state={run} label="Loading the run…">
      {(r) => (
        <>
          {back(loc)}
          <h2>
            Run {r.name} {r.model && <span class="muted">· {r.model}</span>}
          </h2>
          <Totals t={r.totals} title="Totals" />
          {r.items.length === 0 ? (
            <Empty title="No item linked to this run yet">
              <p>
                Link items to the executions they produced: <code>POST …/runs/{r.run_id}/items</code> with <code>item_id</code> and{' '}
                <code>trace_id</code>, or the span attributes <code>traceloom.dataset.run_id</code> / <code>traceloom.dataset.item_id</code>
                .
              </p>
            </Empty>
          ) : (
            <Card title="Items">
              <div class="scroll-x">
                <table class="run-items">
                  <thead>
                    <tr>
                      <th>Input</th>
                      <th>Expected</th>
                      <th>Execution</th>
                      <th>Output</th>
                      <th class="num">Cost</th>
                      <th class="num">Latency</th>
                      <th>Scores</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.items.map((i) => (
                      <tr data-item-id={i.item_id}>
                        <td>
                          <JsonCell value={i.input} />
                        </td>
                        <td>
                          <JsonCell value={i.expected_output} />
                        </td>
                        <ItemCells projectId={projectId} i={i} />
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {r.next_cursor && <p class="muted small">The first {LIMIT} items are shown; the totals count every item.</p>}
            </Card>
          )}
        </>
      )}
    </Load>
  );
}

/** One run's item: its execution (or why there is none), output, cost, latency and scores. */
export function ItemCells({ projectId, i }: { projectId: string; i: DatasetRunItem | null }) {
  if (!i)
    return (
      <td colSpan={5} class="muted">
        not run
      </td>
    );
  const e = i.execution;
  return (
    <>
      <td>
        {i.trace_id ? (
          <Link href={`/projects/${enc(projectId)}/executions/${enc(i.trace_id)}`} class="mono small">
            {i.trace_id}
          </Link>
        ) : (
          <Badge kind="bad">failed</Badge>
        )}
        {i.error && <div class="error-text small">{i.error}</div>}
        {i.trace_id && !e && <div class="muted small">awaiting the execution</div>}
        {e && e.status !== 'ok' && <Badge kind="bad">{e.status}</Badge>}
      </td>
      <td>
        <JsonCell value={e?.output} field="output" />
      </td>
      <td class="num" data-field="cost_usd">
        {dollars(e?.cost_usd)}
      </td>
      <td class="num" data-field="latency_ms" title={e ? `${e.latency_ms} ms` : undefined}>
        {e ? duration(e.latency_ms) : '—'}
      </td>
      <td data-field="scores">
        {Object.entries(i.scores).map(([name, s]) => (
          <Badge kind="label">
            {name}: {typeof s.value === 'number' ? figure(s.value) : String(s.value)}
          </Badge>
        ))}
      </td>
    </>
  );
}

const scoreText = (s: GroupScore): string =>
  s.data_type === 'CATEGORICAL'
    ? Object.entries(s.labels)
        .map(([l, n]) => `${l}: ${int(n)}`)
        .join(', ')
    : s.data_type === 'BOOLEAN'
      ? `rate ${rate(s.rate)} (${interval(s.ci, rate, 'the rate')}), n ${int(s.n)}`
      : `mean ${figure(s.mean)} (${interval(s.ci, figure, 'the mean')}), n ${int(s.n)}`;

export function Totals({ t, title }: { t: DatasetRunTotals; title: string }) {
  return (
    <Card title={title} class="run-totals">
      <dl class="facts">
        <dt>Items</dt>
        <dd data-field="items">
          {int(t.items.linked)} linked{t.dataset_items !== undefined && ` of ${int(t.dataset_items)}`} · {int(t.items.done)} done ·{' '}
          {int(t.items.failed)} failed
          {t.items.awaiting_execution > 0 && ` · ${int(t.items.awaiting_execution)} awaiting their execution`}
          {t.items.executions_with_error > 0 && ` · ${int(t.items.executions_with_error)} executions in error`}
        </dd>
        <dt>Total cost</dt>
        <dd data-field="total_usd">{dollars(t.cost.total_usd)}</dd>
        <dt>Cost per item</dt>
        <dd data-field="per_item">
          mean {dollars(t.cost.per_item.mean_usd)} · p50 {dollars(t.cost.per_item.p50_usd)} · p95 {dollars(t.cost.per_item.p95_usd)}
        </dd>
        <dt>Latency</dt>
        <dd data-field="latency">
          p50 {duration(t.latency_ms.p50)} · p95 {duration(t.latency_ms.p95)}
        </dd>
        <dt>Tokens in / out</dt>
        <dd>
          {int(t.tokens.in)} / {int(t.tokens.out)}
        </dd>
        {Object.entries(t.scores).map(([name, s]) => (
          <>
            <dt>{name}</dt>
            <dd data-score={name}>{scoreText(s)}</dd>
          </>
        ))}
      </dl>
    </Card>
  );
}
