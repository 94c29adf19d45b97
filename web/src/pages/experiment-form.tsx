// "Run an experiment" (docs/datasets.md, "Experiments run by the service"): a prompt version over a
// dataset on a model connection, with LLM judges (evaluators) and deterministic checks, a
// concurrency and a cost cap. POST …/datasets/<id>/experiments (202), then the experiment's page.
// Opened from a dataset (its dataset fixed) or from a prompt version (its prompt and version
// preselected, a dataset to pick).
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { navigate } from '../router.tsx';
import type { DatasetList, EvaluatorList, Experiment, ExperimentCheck, ModelConnection, Prompt } from '../types.ts';
import { Card, ErrorBox, Form, useAction, useApi } from '../ui.tsx';
import { checkBody, ChecksEditor } from './experiment-checks.tsx';
import { experimentPath } from './experiment-table.tsx';

interface Fields {
  name: string;
  datasetId: string;
  promptId: string;
  /** A version number, `latest` or a label (the API pins it when the experiment is created). */
  version: string;
  connectionId: string;
  evaluatorIds: string[];
  checks: ExperimentCheck[];
  concurrency: string;
  maxCost: string;
}

/** The body of POST …/experiments from the form's fields (empty optional fields left out). */
export function experimentBody(f: Fields): Record<string, unknown> {
  return {
    name: f.name.trim(),
    prompt: { prompt_id: f.promptId, version: /^\d+$/.test(f.version) ? Number(f.version) : f.version || 'latest' },
    connection_id: f.connectionId,
    ...(f.evaluatorIds.length ? { evaluator_ids: f.evaluatorIds } : {}),
    ...(f.checks.length ? { checks: f.checks.map(checkBody) } : {}),
    ...(f.concurrency ? { concurrency: Number(f.concurrency) } : {}),
    ...(f.maxCost ? { max_cost_usd: Number(f.maxCost) } : {}),
  };
}

export function ExperimentForm({
  projectId,
  datasetId,
  promptId,
  version,
}: {
  projectId: string;
  /** Fixed: the form is on this dataset's page. */
  datasetId?: string;
  promptId?: string;
  version?: string;
}) {
  const base = `/api/projects/${enc(projectId)}`;
  const prompts = useApi<{ items: Prompt[] }>(`${base}/prompts?limit=200`);
  const connections = useApi<{ items: ModelConnection[] }>(`${base}/model-connections`);
  const evaluators = useApi<EvaluatorList>(`${base}/evaluators`);
  const datasets = useApi<DatasetList>(datasetId ? null : `${base}/datasets?limit=200`);
  const [f, setF] = useState<Fields>({
    name: '',
    datasetId: datasetId ?? '',
    promptId: promptId ?? '',
    version: version ?? 'latest',
    connectionId: '',
    evaluatorIds: [],
    checks: [],
    concurrency: '4',
    maxCost: '',
  });
  const set = (changes: Partial<Fields>) => setF({ ...f, ...changes });
  const value = (e: Event) => (e.target as HTMLInputElement).value;
  const prompt = prompts.data?.items.find((p) => p.prompt_id === f.promptId);
  const connectionId = f.connectionId || connections.data?.items[0]?.connection_id || '';
  const start = useAction(async () => {
    const e = await api<Experiment>(`${base}/datasets/${enc(f.datasetId)}/experiments`, {
      method: 'POST',
      body: experimentBody({ ...f, connectionId }),
    });
    navigate(experimentPath(projectId, e));
  });
  return (
    <Card title="Run an experiment" class="experiment-form">
      <p class="muted small">
        The service calls the model once per item of the dataset (its items as they are now), records each call as an execution, scores the
        answers with the judges and checks, and makes a run of it to open and compare.
      </p>
      <Form onSubmit={() => start.run()} noValidate>
        <div class="form-grid">
          <label>
            Name
            <input name="experiment_name" placeholder="e.g. v3 on gpt-4o" value={f.name} onInput={(e) => set({ name: value(e) })} />
          </label>
          {!datasetId && (
            <label>
              Dataset
              <select name="dataset" value={f.datasetId} onChange={(e) => set({ datasetId: value(e) })}>
                <option value="">— pick a dataset —</option>
                {datasets.data?.items.map((d) => (
                  <option value={d.dataset_id}>
                    {d.name} ({d.items} items)
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            Prompt
            <select name="prompt" value={f.promptId} onChange={(e) => set({ promptId: value(e), version: 'latest' })}>
              <option value="">— pick a prompt —</option>
              {prompts.data?.items.map((p) => (
                <option value={p.prompt_id}>{p.prompt_id}</option>
              ))}
            </select>
          </label>
          <label>
            Version
            <select name="version" value={f.version} onChange={(e) => set({ version: value(e) })}>
              <option value="latest">latest{prompt ? ` (v${prompt.latest_version})` : ''}</option>
              {prompt &&
                Object.entries(prompt.labels).map(([label, v]) => (
                  <option value={label}>
                    label {label} (v{v})
                  </option>
                ))}
              {prompt &&
                Array.from({ length: prompt.latest_version }, (_, i) => prompt.latest_version - i).map((n) => (
                  <option value={String(n)}>v{n}</option>
                ))}
              {!prompt && f.version !== 'latest' && <option value={f.version}>{f.version}</option>}
            </select>
          </label>
          <label>
            Model connection
            <select name="connection" value={connectionId} onChange={(e) => set({ connectionId: value(e) })}>
              {connections.data?.items.length === 0 && (
                <option value="">no connection: an admin adds one in Settings → Model connections</option>
              )}
              {connections.data?.items.map((c) => (
                <option value={c.connection_id}>
                  {c.name} · {c.model}
                </option>
              ))}
            </select>
          </label>
          <label>
            Concurrency
            <input
              type="number"
              name="concurrency"
              min={1}
              max={32}
              value={f.concurrency}
              onInput={(e) => set({ concurrency: value(e) })}
            />
          </label>
          <label>
            Max cost (USD)
            <input
              type="number"
              name="max_cost_usd"
              min={0}
              step="any"
              placeholder="no cap"
              value={f.maxCost}
              onInput={(e) => set({ maxCost: value(e) })}
            />
          </label>
        </div>
        <fieldset class="evaluators-pick">
          <legend>Evaluators (LLM judges)</legend>
          {evaluators.data?.items.length === 0 && <p class="muted small">No evaluator in this project.</p>}
          <div class="inline">
            {evaluators.data?.items.map((ev) => (
              <label>
                <input
                  type="checkbox"
                  name="evaluator"
                  value={ev.evaluator_id}
                  checked={f.evaluatorIds.includes(ev.evaluator_id)}
                  onChange={(e) =>
                    set({
                      evaluatorIds: (e.target as HTMLInputElement).checked
                        ? [...f.evaluatorIds, ev.evaluator_id]
                        : f.evaluatorIds.filter((x) => x !== ev.evaluator_id),
                    })
                  }
                />
                {ev.name} <span class="muted small">({ev.score_name})</span>
              </label>
            ))}
          </div>
        </fieldset>
        <ChecksEditor checks={f.checks} onChange={(checks) => set({ checks })} />
        <div class="inline">
          <button type="submit" class="primary start-experiment" disabled={start.busy || !f.datasetId || !f.promptId}>
            Start the experiment
          </button>
          {start.busy && <span class="muted">starting…</span>}
        </div>
      </Form>
      <ErrorBox error={prompts.error ?? connections.error ?? evaluators.error ?? datasets.error} />
      <ErrorBox error={start.error} title="Experiment refused" />
    </Card>
  );
}
