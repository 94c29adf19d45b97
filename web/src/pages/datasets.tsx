// Datasets (docs/datasets.md): the project's datasets, and one dataset's page — its items (input,
// expected output, the execution it was made from), an import of JSON Lines or CSV from a file
// (rejected lines named with their line numbers), the JSON Lines export, and its experiment runs
// (dataset-runs.tsx: a run's table, two runs compared) and the experiments the service runs on it
// (experiments.tsx). The query string holds the tab, the run shown (run=) and the runs compared
// (compare=a,b).
import { useState } from 'preact/hooks';
import { api, download, enc, query, upload } from '../api.ts';
import { int } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { Dataset, DatasetImportResult, DatasetItemList, DatasetList, Role } from '../types.ts';
import { Card, Empty, ErrorBox, Form, Load, Tabs, Time, useAction, useApi } from '../ui.tsx';
import { JsonCell, RunResult, Runs } from './dataset-runs.tsx';
import { RunCompare } from './run-compare.tsx';
import { DatasetExperiments } from './experiments.tsx';

const LIMIT = 50;

export const datasetPath = (projectId: string, datasetId: string) => `/projects/${enc(projectId)}/datasets/${enc(datasetId)}`;

export function Datasets({ projectId, role }: { projectId: string; role: Role }) {
  const loc = useLocation();
  const cursor = loc.params.get('cursor') ?? undefined;
  const list = useApi<DatasetList>(`/api/projects/${enc(projectId)}/datasets${query({ limit: LIMIT, cursor })}`);
  return (
    <>
      <header class="page">
        <h1>Datasets</h1>
      </header>
      {role !== 'viewer' && <NewDataset projectId={projectId} />}
      <Load state={list} label="Loading datasets…">
        {(page) =>
          page.items.length === 0 && !cursor ? (
            <Empty title="No datasets yet">
              <p>
                Create one above, then import its items from a JSON Lines or CSV file, or open an execution and use{' '}
                <strong>Add to dataset</strong>. Run your code on its items and link each to the execution it produced to compare runs.
              </p>
            </Empty>
          ) : (
            <Card>
              <table class="datasets">
                <thead>
                  <tr>
                    <th>Dataset</th>
                    <th class="num">Items</th>
                    <th>Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((d) => (
                    <tr data-dataset={d.name}>
                      <td>
                        <Link href={datasetPath(projectId, d.dataset_id)}>{d.name}</Link>
                        {d.description && <div class="muted small">{d.description}</div>}
                      </td>
                      <td class="num">{int(d.items)}</td>
                      <td>
                        <Time iso={d.updated_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager next={page.next_cursor} />
            </Card>
          )
        }
      </Load>
    </>
  );
}

/** Keyset pages: back to the first, or on to the next. */
function Pager({ next }: { next: string | null }) {
  const loc = useLocation();
  const cursor = loc.params.get('cursor');
  if (!cursor && !next) return null;
  return (
    <div class="table-head">
      <span />
      <span class="pager">
        <button type="button" disabled={!cursor} onClick={() => navigate(withParams(loc, { cursor: null }))}>
          ← First
        </button>
        <button type="button" disabled={!next} onClick={() => navigate(withParams(loc, { cursor: next }))}>
          Next →
        </button>
      </span>
    </div>
  );
}

function NewDataset({ projectId }: { projectId: string }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useAction(async () => {
    const d = await api<Dataset>(`/api/projects/${enc(projectId)}/datasets`, {
      method: 'POST',
      body: { name, ...(description ? { description } : {}) },
    });
    navigate(datasetPath(projectId, d.dataset_id));
  });
  return (
    <Card title="New dataset">
      <Form class="inline" onSubmit={() => create.run()} noValidate>
        <input name="name" placeholder="Name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <input
          name="description"
          placeholder="Description (optional)"
          value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={create.busy}>
          Create dataset
        </button>
      </Form>
      <ErrorBox error={create.error} />
    </Card>
  );
}

type Tab = 'items' | 'runs' | 'experiments';

export function DatasetDetail({ projectId, datasetId, role }: { projectId: string; datasetId: string; role: Role }) {
  const loc = useLocation();
  const base = `/api/projects/${enc(projectId)}/datasets/${enc(datasetId)}`;
  const dataset = useApi<Dataset>(base);
  const run = loc.params.get('run');
  const compare = loc.params.get('compare');
  const tab: Tab =
    run || compare
      ? 'runs'
      : loc.params.get('tab') === 'runs' || loc.params.get('tab') === 'experiments'
        ? (loc.params.get('tab') as Tab)
        : 'items';
  return (
    <Load state={dataset} label="Loading the dataset…">
      {(d) => (
        <>
          <header class="page">
            <div>
              <Link href={`/projects/${enc(projectId)}/datasets`} class="back">
                ← Datasets
              </Link>
              <h1>{d.name}</h1>
              {d.description && <p class="muted">{d.description}</p>}
            </div>
          </header>
          <Tabs<Tab>
            tabs={[
              ['items', `Items (${d.items})`],
              ['runs', 'Runs'],
              ['experiments', 'Experiments'],
            ]}
            active={tab}
            onChange={(t) => navigate(withParams(loc, { tab: t === 'items' ? null : t, run: null, compare: null, cursor: null }))}
          />
          {tab === 'items' && <Items projectId={projectId} base={base} role={role} onImported={dataset.reload} />}
          {tab === 'runs' && !run && !compare && <Runs projectId={projectId} base={base} />}
          {tab === 'runs' && run && <RunResult projectId={projectId} base={base} runId={run} />}
          {tab === 'runs' && compare && <RunCompare projectId={projectId} base={base} runs={compare} />}
          {tab === 'experiments' && <DatasetExperiments projectId={projectId} datasetId={datasetId} base={base} role={role} />}
        </>
      )}
    </Load>
  );
}

function Items({ projectId, base, role, onImported }: { projectId: string; base: string; role: Role; onImported(): void }) {
  const loc = useLocation();
  const cursor = loc.params.get('cursor') ?? undefined;
  const items = useApi<DatasetItemList>(`${base}/items${query({ limit: LIMIT, cursor })}`);
  const exported = useAction(() => download(`${base}/items/export`));
  return (
    <>
      <div class="grid two">
        {role !== 'viewer' && (
          <Import
            base={base}
            onImported={() => {
              items.reload();
              onImported();
            }}
          />
        )}
        <Card title="Export">
          <p class="muted">
            Every item as JSON Lines (item_id, version, input, expected_output, metadata, source_trace_id): it imports back.
          </p>
          <button type="button" class="export-items" disabled={exported.busy} onClick={() => exported.run()}>
            Export JSON Lines
          </button>
          <ErrorBox error={exported.error} title="Export failed" />
        </Card>
      </div>
      <Load state={items} label="Loading items…">
        {(page) =>
          page.items.length === 0 && !cursor ? (
            <Empty title="No items yet">
              <p>
                Import a JSON Lines or CSV file above (a CSV header of <code>input</code> or <code>input.&lt;variable&gt;</code>,{' '}
                <code>expected_output</code>, <code>metadata</code>), or open an execution and use <strong>Add to dataset</strong>.
              </p>
            </Empty>
          ) : (
            <Card>
              <table class="dataset-items">
                <thead>
                  <tr>
                    <th>Input</th>
                    <th>Expected output</th>
                    <th class="num">Version</th>
                    <th>From execution</th>
                    <th>Added</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((i) => (
                    <tr data-item-id={i.item_id}>
                      <td>
                        <JsonCell value={i.input} field="input" />
                      </td>
                      <td>
                        <JsonCell value={i.expected_output} field="expected_output" />
                      </td>
                      <td class="num">v{i.version}</td>
                      <td>
                        {i.source_trace_id ? (
                          <Link href={`/projects/${enc(projectId)}/executions/${enc(i.source_trace_id)}`} class="mono">
                            {i.source_trace_id}
                          </Link>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td>
                        <Time iso={i.created_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager next={page.next_cursor} />
            </Card>
          )
        }
      </Load>
    </>
  );
}

/** A file's content type for the import: CSV by its name or type, JSON Lines otherwise. */
const contentTypeOf = (file: File): string => (/\.csv$/i.test(file.name) || file.type === 'text/csv' ? 'text/csv' : 'application/x-ndjson');

function Import({ base, onImported }: { base: string; onImported(): void }) {
  const [file, setFile] = useState<File | null>(null);
  const [result, setResult] = useState<DatasetImportResult | null>(null);
  const action = useAction(async () => {
    if (!file) return;
    setResult(null);
    setResult(await upload<DatasetImportResult>(`${base}/items/import`, file, contentTypeOf(file)));
    onImported();
  });
  return (
    <Card title="Import items" class="import">
      <Form class="inline" onSubmit={() => action.run()}>
        <input
          type="file"
          name="file"
          aria-label="File to import (JSONL or CSV)"
          accept=".jsonl,.ndjson,.csv,text/csv,application/x-ndjson"
          onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)}
        />
        <button type="submit" class="primary" disabled={!file || action.busy}>
          Import
        </button>
        {action.busy && <span class="muted">importing…</span>}
      </Form>
      <p class="muted small">JSON Lines (.jsonl) or CSV (.csv). Bad lines are left out and named; the others are kept.</p>
      <ErrorBox error={action.error} title="Import refused" />
      {result && (
        <div class="import-result" role="status">
          <p>
            Imported <strong data-field="imported">{int(result.imported)}</strong> {result.imported === 1 ? 'item' : 'items'};{' '}
            <strong data-field="rejected_count">{int(result.rejected_count)}</strong> {result.rejected_count === 1 ? 'line' : 'lines'}{' '}
            rejected.
          </p>
          {result.rejected.length > 0 && (
            <table class="rejected">
              <thead>
                <tr>
                  <th class="num">Line</th>
                  <th>Why</th>
                </tr>
              </thead>
              <tbody>
                {result.rejected.map((r) => (
                  <tr data-line={r.line}>
                    <td class="num">{r.line}</td>
                    <td>{r.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {result.rejected_count > result.rejected.length && (
            <p class="muted small">Only the first {int(result.rejected.length)} rejected lines are listed.</p>
          )}
        </div>
      )}
    </Card>
  );
}
