// Pieces of the experiments' pages: where an experiment's page is, its status badge, its progress
// (items done / failed / pending, spent against the cap) and the table that lists experiments.
import { enc } from '../api.ts';
import { int, usdText } from '../format.ts';
import { Link } from '../router.tsx';
import type { Experiment, ExperimentStatus } from '../types.ts';
import { Badge, Time } from '../ui.tsx';
import { datasetPath } from './datasets.tsx';

/** Its page, under its dataset like the API's path. */
export const experimentPath = (projectId: string, e: Pick<Experiment, 'dataset_id' | 'experiment_id'>) =>
  `${datasetPath(projectId, e.dataset_id)}/experiments/${enc(e.experiment_id)}`;

/** Still moving: its page polls it. */
export const isActive = (s: ExperimentStatus) => s === 'queued' || s === 'running';

const KIND: Record<ExperimentStatus, string> = {
  queued: 'warn',
  running: 'warn',
  done: 'ok',
  capped: 'warn',
  blocked: 'bad',
  failed: 'bad',
  cancelled: '',
};

export function StatusBadge({ status }: { status: ExperimentStatus }) {
  return (
    <span data-field="status">
      <Badge kind={KIND[status]}>{status}</Badge>
    </span>
  );
}

/** Items done, failed and pending as one bar, with the counts; the spend against its cap. */
export function Progress({ e }: { e: Experiment }) {
  const p = e.progress;
  const share = (n: number) => `${p.items ? (100 * n) / p.items : 0}%`;
  const cap = e.max_cost_usd ?? null;
  return (
    <div class="experiment-progress">
      <div
        class="bar"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={p.items}
        aria-valuenow={p.done + p.failed}
        title={`${p.done} done, ${p.failed} failed, ${p.pending} pending of ${p.items}`}
      >
        <span class="done" style={{ width: share(p.done) }} />
        <span class="failed" style={{ width: share(p.failed) }} />
      </div>
      <div class="small" data-field="progress">
        {int(p.done)} done · {int(p.failed)} failed · {int(p.pending)} pending of {int(p.items)}
      </div>
      <div class="small" data-field="spent">
        spent <strong>{usdText(p.spent_usd)}</strong>
        {cap !== null ? (
          <>
            {' '}
            of the {usdText(cap)} cap <progress max={Number(cap)} value={Math.min(Number(p.spent_usd), Number(cap))} />
          </>
        ) : (
          ' (no cap)'
        )}
      </div>
    </div>
  );
}

export function ExperimentTable({
  projectId,
  items,
  datasetNames,
}: {
  projectId: string;
  items: Experiment[];
  /** Shown with a dataset column (the project's list). */
  datasetNames?: Record<string, string>;
}) {
  return (
    <table class="experiments">
      <thead>
        <tr>
          <th>Experiment</th>
          {datasetNames && <th>Dataset</th>}
          <th>Prompt</th>
          <th>Status</th>
          <th>Progress</th>
          <th class="num">Spent</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {items.map((e) => (
          <tr data-experiment={e.name}>
            <td>
              <Link href={experimentPath(projectId, e)}>{e.name}</Link>
            </td>
            {datasetNames && (
              <td>
                <Link href={datasetPath(projectId, e.dataset_id)}>{datasetNames[e.dataset_id] ?? e.dataset_id}</Link>
              </td>
            )}
            <td>
              <Link href={`/projects/${enc(projectId)}/prompts/${enc(e.prompt.prompt_id)}?version=${e.prompt.version}`}>
                <Badge kind="label">
                  {e.prompt.prompt_id} v{e.prompt.version}
                </Badge>
              </Link>
            </td>
            <td>
              <StatusBadge status={e.status} />
            </td>
            <td class="small">
              {int(e.progress.done)} done · {int(e.progress.failed)} failed · {int(e.progress.pending)} pending
            </td>
            <td class="num">{usdText(e.progress.spent_usd)}</td>
            <td>
              <Time iso={e.created_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
