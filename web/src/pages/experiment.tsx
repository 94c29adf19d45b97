// One experiment (GET …/datasets/<d>/experiments/<id>): its status and status_detail, its progress
// (polled while it is queued or running, no longer once it ends), Cancel and Resume (with a new cost
// cap, or none), its items (state, answer, cost, attempts, error, execution), a link to its run's
// page, and "Compare with…" another run of the dataset on the run comparison page.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc, query } from '../api.ts';
import { int, usdText } from '../format.ts';
import { Link, navigate } from '../router.tsx';
import type { Dataset, DatasetRunList, Experiment, ExperimentItemList, Role } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Load, Time, useAction, useApi } from '../ui.tsx';
import { JsonCell } from './dataset-runs.tsx';
import { Author, useKeyNames } from '../authors.tsx';
import { datasetPath } from './datasets.tsx';
import { isActive, Progress, StatusBadge } from './experiment-table.tsx';

const POLL_MS = 1000;
const LIMIT = 200;

export function ExperimentPage({
  projectId,
  datasetId,
  experimentId,
  role,
}: {
  projectId: string;
  datasetId: string;
  experimentId: string;
  role: Role;
}) {
  const dsBase = `/api/projects/${enc(projectId)}/datasets/${enc(datasetId)}`;
  const base = `${dsBase}/experiments/${enc(experimentId)}`;
  const exp = useApi<Experiment>(base);
  const names = useKeyNames(projectId);
  const items = useApi<ExperimentItemList>(`${base}/items${query({ limit: LIMIT })}`);
  const dataset = useApi<Dataset>(dsBase);
  const status = exp.data?.status;
  // Poll while it moves; once it ends, read its items one last time.
  const was = useRef(status);
  useEffect(() => {
    const before = was.current;
    was.current = status;
    if (!status) return;
    if (!isActive(status)) {
      if (before && isActive(before)) items.reload();
      return;
    }
    const t = setTimeout(() => {
      exp.reload();
      items.reload();
    }, POLL_MS);
    return () => clearTimeout(t);
  }, [exp.data]);
  const changed = (e: Experiment | undefined) => {
    if (e) {
      exp.reload();
      items.reload();
    }
  };
  const cancel = useAction(async () => changed(await api<Experiment>(`${base}/cancel`, { method: 'POST' })));
  const dsPath = datasetPath(projectId, datasetId);
  return (
    <Load state={exp} label="Loading the experiment…">
      {(e) => (
        <>
          <header class="page">
            <div>
              <Link href={`${dsPath}?tab=experiments`} class="back">
                ← {dataset.data?.name ?? 'Dataset'}: experiments
              </Link>
              <h1>{e.name}</h1>
              <p class="muted small">
                <Link href={`/projects/${enc(projectId)}/prompts/${enc(e.prompt.prompt_id)}?version=${e.prompt.version}`}>
                  {e.prompt.prompt_id} v{e.prompt.version}
                </Link>{' '}
                · connection {e.connection_id} · concurrency {e.concurrency ?? '—'} · created <Time iso={e.created_at} />
                {e.created_by && (
                  <>
                    {' by '}
                    <Author id={e.created_by} names={names} />
                  </>
                )}
              </p>
            </div>
            <Link href={`${dsPath}?run=${enc(e.run_id)}`} class="button run-link">
              Open its run
            </Link>
          </header>
          <Card
            title={
              <>
                Status <StatusBadge status={e.status} />
              </>
            }
            class="experiment-status"
            actions={
              role !== 'viewer' &&
              isActive(e.status) && (
                <button
                  type="button"
                  class="danger cancel-experiment"
                  disabled={cancel.busy}
                  onClick={() => confirm(`Cancel "${e.name}"? No item starts after this.`) && cancel.run()}
                >
                  Cancel
                </button>
              )
            }
          >
            {e.status_detail && <p data-field="status_detail">{e.status_detail}</p>}
            <Progress e={e} />
            {isActive(e.status) && <p class="muted small">Refreshing every second while it runs.</p>}
            <ErrorBox error={cancel.error} title="Not cancelled" />
            {role !== 'viewer' && !isActive(e.status) && e.status !== 'done' && <Resume base={base} e={e} onResumed={changed} />}
          </Card>
          <CompareWith dsBase={dsBase} dsPath={dsPath} e={e} />
          <Card title="Items" class="experiment-items">
            <Load state={items} label="Loading items…">
              {(page) => <ItemTable projectId={projectId} items={page.items} />}
            </Load>
            {items.data?.next_cursor && <p class="muted small">The first {LIMIT} items are shown; the progress counts every item.</p>}
          </Card>
        </>
      )}
    </Load>
  );
}

function Resume({ base, e, onResumed }: { base: string; e: Experiment; onResumed(e: Experiment | undefined): void }) {
  const [cap, setCap] = useState('');
  const [noCap, setNoCap] = useState(false);
  const resume = useAction(async () =>
    onResumed(
      await api<Experiment>(`${base}/resume`, {
        method: 'POST',
        body: noCap ? { max_cost_usd: null } : cap ? { max_cost_usd: Number(cap) } : {},
      }),
    ),
  );
  return (
    <Form class="inline resume" onSubmit={() => resume.run()} noValidate>
      <span class="muted small">Go on with the items it did not run{e.max_cost_usd ? ` (cap now ${usdText(e.max_cost_usd)})` : ''}:</span>
      <input
        type="number"
        name="new_cap"
        min={0}
        step="any"
        placeholder="new cap (USD), optional"
        disabled={noCap}
        value={cap}
        onInput={(ev) => setCap((ev.target as HTMLInputElement).value)}
      />
      <label>
        <input type="checkbox" name="no_cap" checked={noCap} onChange={(ev) => setNoCap((ev.target as HTMLInputElement).checked)} />
        no cap
      </label>
      <button type="submit" class="primary resume-experiment" disabled={resume.busy}>
        Resume
      </button>
      <ErrorBox error={resume.error} title="Not resumed" />
    </Form>
  );
}

/** Another run of the same dataset (another experiment's, or any run) against this one. */
function CompareWith({ dsBase, dsPath, e }: { dsBase: string; dsPath: string; e: Experiment }) {
  const runs = useApi<DatasetRunList>(`${dsBase}/runs?limit=100`);
  const others = (runs.data?.items ?? []).filter((r) => r.run_id !== e.run_id);
  const [other, setOther] = useState('');
  const picked = other || others[0]?.run_id || '';
  return (
    <Card title="Compare with…" class="compare-with">
      {runs.data && others.length === 0 ? (
        <p class="muted">No other run of this dataset yet: run another experiment to compare with this one.</p>
      ) : (
        <div class="inline">
          <select
            name="compare_with"
            aria-label="Run to compare with"
            value={picked}
            onChange={(ev) => setOther((ev.target as HTMLSelectElement).value)}
          >
            {others.map((r) => (
              <option value={r.run_id}>
                {r.name}
                {r.prompts.length ? ` · ${r.prompts.map((p) => `${p.prompt_id} v${p.version}`).join(', ')}` : ''}
                {r.model ? ` · ${r.model}` : ''}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="compare-experiment"
            disabled={!picked}
            onClick={() => navigate(`${dsPath}?compare=${e.run_id},${picked}`)}
          >
            Compare
          </button>
          <span class="muted small">a: this experiment, b: the one picked (paired tests on the items both ran)</span>
        </div>
      )}
      <ErrorBox error={runs.error} />
    </Card>
  );
}

function ItemTable({ projectId, items }: { projectId: string; items: ExperimentItemList['items'] }) {
  return (
    <table class="experiment-items">
      <thead>
        <tr>
          <th>Item</th>
          <th>State</th>
          <th>Answer</th>
          <th class="num">Cost</th>
          <th class="num">Attempts</th>
          <th>Error</th>
          <th>Execution</th>
        </tr>
      </thead>
      <tbody>
        {items.map((i) => (
          <tr data-item-id={i.item_id} data-state={i.status}>
            <td class="mono small" title={i.item_id}>
              {i.item_id.slice(0, 8)} v{i.item_version}
            </td>
            <td>
              <Badge kind={i.status === 'done' ? 'ok' : i.status === 'failed' ? 'bad' : 'warn'}>{i.status}</Badge>
            </td>
            <td>
              <JsonCell value={i.output} field="output" />
            </td>
            <td class="num" data-field="cost_usd">
              {usdText(i.cost_usd)}
            </td>
            <td class="num">{int(i.attempts)}</td>
            <td data-field="error">{i.error ? <span class="error-text">{i.error}</span> : <span class="muted">—</span>}</td>
            <td>
              {i.trace_id ? (
                <Link href={`/projects/${enc(projectId)}/executions/${enc(i.trace_id)}`} class="mono small">
                  {i.trace_id}
                </Link>
              ) : (
                '—'
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
