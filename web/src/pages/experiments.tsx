// Experiments run by the service (docs/datasets.md): the project's list (GET …/experiments, newest
// first), with the form to start one (`?new=1`, and `prompt=`/`version=` when opened from a prompt
// version); and a dataset's own experiments with the form for that dataset (its Experiments tab).
import { enc, query } from '../api.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { DatasetList, ExperimentList, Role } from '../types.ts';
import { Card, Empty, Load, useApi } from '../ui.tsx';
import { ExperimentForm } from './experiment-form.tsx';
import { ExperimentTable } from './experiment-table.tsx';

const LIMIT = 100;

export function Experiments({ projectId, role }: { projectId: string; role: Role }) {
  const loc = useLocation();
  const base = `/api/projects/${enc(projectId)}`;
  const cursor = loc.params.get('cursor') ?? undefined;
  const list = useApi<ExperimentList>(`${base}/experiments${query({ limit: LIMIT, cursor })}`);
  const datasets = useApi<DatasetList>(`${base}/datasets?limit=1000`);
  const names = Object.fromEntries((datasets.data?.items ?? []).map((d) => [d.dataset_id, d.name]));
  const creating = loc.params.get('new') === '1' && role !== 'viewer';
  return (
    <>
      <header class="page">
        <h1>Experiments</h1>
        {role !== 'viewer' && !creating && (
          <button type="button" class="primary" onClick={() => navigate(withParams(loc, { new: '1' }))}>
            Run an experiment
          </button>
        )}
      </header>
      {creating && (
        <ExperimentForm
          projectId={projectId}
          promptId={loc.params.get('prompt') ?? undefined}
          version={loc.params.get('version') ?? undefined}
        />
      )}
      <Load state={list} label="Loading experiments…">
        {(page) =>
          page.items.length === 0 && !cursor ? (
            <Empty title="No experiments yet">
              <p>
                An experiment runs a prompt version over a dataset on a model connection: open a dataset and use{' '}
                <strong>Run an experiment</strong>, or <strong>Run on a dataset</strong> on a prompt version.
              </p>
            </Empty>
          ) : (
            <Card>
              <ExperimentTable projectId={projectId} items={page.items} datasetNames={names} />
              {page.next_cursor && (
                <p>
                  <Link href={withParams(loc, { cursor: page.next_cursor })}>Older experiments →</Link>
                </p>
              )}
            </Card>
          )
        }
      </Load>
    </>
  );
}

/** A dataset's Experiments tab: the form (not for viewers) and its experiments. */
export function DatasetExperiments({
  projectId,
  datasetId,
  base,
  role,
}: {
  projectId: string;
  datasetId: string;
  base: string;
  role: Role;
}) {
  const list = useApi<ExperimentList>(`${base}/experiments${query({ limit: LIMIT })}`);
  return (
    <>
      {role !== 'viewer' && <ExperimentForm projectId={projectId} datasetId={datasetId} />}
      <Load state={list} label="Loading experiments…">
        {(page) =>
          page.items.length === 0 ? (
            <Empty title="No experiments on this dataset yet">
              <p>Run one above: the service calls the model for every item and makes a run of it.</p>
            </Empty>
          ) : (
            <Card title="Experiments">
              <ExperimentTable projectId={projectId} items={page.items} />
            </Card>
          )
        }
      </Load>
    </>
  );
}
