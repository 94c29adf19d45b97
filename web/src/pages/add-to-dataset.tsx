// "Add to dataset" on an execution's page: the execution's input messages and its output made an
// item of a dataset in one call (POST …/datasets/{id}/items/from-execution), then a link to it.
import { useState } from 'preact/hooks';
import { api, enc, query } from '../api.ts';
import { Link } from '../router.tsx';
import type { DatasetItem, DatasetList } from '../types.ts';
import { Card, ErrorBox, Form, useAction, useApi } from '../ui.tsx';
import { datasetPath } from './datasets.tsx';

export function AddToDataset({ projectId, traceId }: { projectId: string; traceId: string }) {
  const datasets = useApi<DatasetList>(`/api/projects/${enc(projectId)}/datasets${query({ limit: 1000 })}`);
  const [picked, setPicked] = useState('');
  const [added, setAdded] = useState<{ item: DatasetItem; name: string } | null>(null);
  const items = datasets.data?.items ?? [];
  const target = picked || items[0]?.dataset_id || '';
  const add = useAction(async () => {
    setAdded(null);
    const item = await api<DatasetItem>(`/api/projects/${enc(projectId)}/datasets/${enc(target)}/items/from-execution`, {
      method: 'POST',
      body: { trace_id: traceId },
    });
    setAdded({ item, name: items.find((d) => d.dataset_id === target)?.name ?? target });
  });
  if (!datasets.data) return <ErrorBox error={datasets.error} title="Datasets" />;
  return (
    <Card title="Add to dataset" class="add-to-dataset">
      {items.length === 0 ? (
        <p class="muted">
          No dataset yet: <Link href={`/projects/${enc(projectId)}/datasets`}>create one on the Datasets page</Link>, then add this
          execution to it as a test case.
        </p>
      ) : (
        <Form class="inline" onSubmit={() => add.run()}>
          <select name="dataset" aria-label="Dataset" value={target} onChange={(e) => setPicked((e.target as HTMLSelectElement).value)}>
            {items.map((d) => (
              <option value={d.dataset_id}>{d.name}</option>
            ))}
          </select>
          <button type="submit" class="primary" disabled={add.busy || !target}>
            Add to dataset
          </button>
          <span class="muted small">its input messages as input, its output as expected output</span>
        </Form>
      )}
      <ErrorBox error={add.error} title="Not added" />
      {added && (
        <p role="status" data-added-item={added.item.item_id}>
          Added to <Link href={datasetPath(projectId, added.item.dataset_id)}>{added.name}</Link>.
        </p>
      )}
    </Card>
  );
}
