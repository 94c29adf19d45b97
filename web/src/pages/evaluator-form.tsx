// An evaluator's form (admins; POST …/evaluators, PUT …/evaluators/<id>): the judge prompt and its
// label, the model connection, the score config it writes, what it judges — new executions with
// their filters and sampling rate, or a dataset run — the variables' sources and its daily judge
// budget. Each list offers what exists (prompts, connections, live score configs), and says where
// to add one when there is none; the API's 404/409/422 detail is shown as it comes.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { Link } from '../router.tsx';
import type { DatasetList, DatasetRunList, Evaluator, ModelConnection, Prompt, ScoreConfig } from '../types.ts';
import { Card, ErrorBox, Form, useAction, useApi } from '../ui.tsx';

/** Filters of new executions offered here (lists, comma-separated); EvaluatorFilter has more. */
const LIST_FILTERS: Array<[string, string]> = [
  ['agent_id', 'Agents'],
  ['model', 'Models'],
  ['provider', 'Providers'],
  ['user_id', 'Users'],
  ['tag', 'Tags'],
];

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

function draftOf(ev?: Evaluator) {
  const t = ev?.target;
  const filter = (t?.kind === 'executions' ? t.filter : {}) as Record<string, unknown>;
  return {
    name: ev?.name ?? '',
    prompt_id: ev?.prompt_id ?? '',
    prompt_label: ev?.prompt_label ?? 'production',
    connection_id: ev?.connection_id ?? '',
    score_name: ev?.score_name ?? '',
    kind: (t?.kind ?? 'executions') as 'executions' | 'dataset_run',
    filters: Object.fromEntries(LIST_FILTERS.map(([k]) => [k, Array.isArray(filter[k]) ? (filter[k] as string[]).join(', ') : ''])),
    status: typeof filter.status === 'string' ? filter.status : '',
    sampling_pct: t?.kind === 'executions' ? String(Number((t.sampling_rate * 100).toPrecision(6))) : '100',
    dataset_id: t?.kind === 'dataset_run' ? t.dataset_id : '',
    run_id: t?.kind === 'dataset_run' ? t.run_id : '',
    variables: Object.entries(ev?.variables ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
    max_daily_cost_usd: ev?.max_daily_cost_usd === null || ev?.max_daily_cost_usd === undefined ? '' : String(ev.max_daily_cost_usd),
  };
}

export function EvaluatorForm({
  projectId,
  evaluator,
  onDone,
  onCancel,
}: {
  projectId: string;
  evaluator?: Evaluator;
  onDone(ev: Evaluator): void;
  onCancel(): void;
}) {
  const p = `/api/projects/${enc(projectId)}`;
  const settings = `/projects/${enc(projectId)}/settings`;
  const prompts = useApi<{ items: Prompt[] }>(`${p}/prompts?limit=1000`);
  const connections = useApi<{ items: ModelConnection[] }>(`${p}/model-connections`);
  const configs = useApi<{ items: ScoreConfig[] }>(`${p}/score-configs`);
  const [f, setF] = useState(() => draftOf(evaluator));
  const datasets = useApi<DatasetList>(f.kind === 'dataset_run' ? `${p}/datasets?limit=200` : null);
  const runs = useApi<DatasetRunList>(
    f.kind === 'dataset_run' && f.dataset_id ? `${p}/datasets/${enc(f.dataset_id)}/runs?limit=200` : null,
  );
  const set = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const save = useAction(async () => {
    const filter: Record<string, unknown> = {};
    for (const [k] of LIST_FILTERS) if (list(f.filters[k] ?? '').length) filter[k] = list(f.filters[k] ?? '');
    if (f.status) filter.status = f.status;
    const variables = Object.fromEntries(
      f.variables
        .split(/\s+/)
        .filter(Boolean)
        // `name=source`; a bare name is its own source (output=output); the API checks both.
        .map((pair) => (pair.indexOf('=') > 0 ? [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] : [pair, pair])),
    );
    const body = {
      name: f.name.trim(),
      prompt_id: f.prompt_id,
      prompt_label: f.prompt_label.trim() || 'production',
      connection_id: f.connection_id,
      score_name: f.score_name,
      variables,
      target:
        f.kind === 'executions'
          ? { kind: 'executions', filter, sampling_rate: Number(f.sampling_pct) / 100 }
          : { kind: 'dataset_run', dataset_id: f.dataset_id, run_id: f.run_id },
      max_daily_cost_usd: f.max_daily_cost_usd.trim() ? Number(f.max_daily_cost_usd) : null,
    };
    const saved = evaluator
      ? await api<Evaluator>(`${p}/evaluators/${enc(evaluator.evaluator_id)}`, { method: 'PUT', body })
      : await api<Evaluator>(`${p}/evaluators`, { method: 'POST', body });
    onDone(saved);
  });
  const none = (what: string, where: string, href: string) => (
    <span class="muted small" data-missing={what}>
      no {what} yet: <Link href={href}>{where}</Link>
    </span>
  );
  return (
    <Card title={evaluator ? `Edit evaluator ${evaluator.name}` : 'New evaluator'} class="evaluator-form">
      <Form class="form-grid" onSubmit={() => save.run()} noValidate>
        <label>
          Name
          <input name="evaluator_name" maxLength={200} placeholder="correctness" value={f.name} onInput={set('name')} />
        </label>
        <label>
          Judge prompt
          <select name="evaluator_prompt" value={f.prompt_id} onChange={set('prompt_id')}>
            <option value="">— pick a prompt —</option>
            {(prompts.data?.items ?? []).map((x) => (
              <option value={x.prompt_id}>{x.prompt_id}</option>
            ))}
          </select>
          {prompts.data?.items.length === 0 && none('prompt', 'create a judge prompt', `/projects/${enc(projectId)}/prompts?new=1`)}
        </label>
        <label>
          Prompt label
          <input name="evaluator_prompt_label" maxLength={64} value={f.prompt_label} onInput={set('prompt_label')} />
        </label>
        <label>
          Model connection
          <select name="evaluator_connection" value={f.connection_id} onChange={set('connection_id')}>
            <option value="">— pick a connection —</option>
            {(connections.data?.items ?? []).map((c) => (
              <option value={c.connection_id}>
                {c.name} ({c.model})
              </option>
            ))}
          </select>
          {connections.data?.items.length === 0 && none('model connection', 'add one in Settings', `${settings}#model-connections`)}
        </label>
        <label>
          Score (its config)
          <select name="evaluator_score" value={f.score_name} onChange={set('score_name')}>
            <option value="">— pick a score config —</option>
            {(configs.data?.items ?? []).map((c) => (
              <option value={c.name}>
                {c.name} ({c.data_type.toLowerCase()})
              </option>
            ))}
          </select>
          {configs.data?.items.length === 0 && none('score config', 'add one in Settings', `${settings}#score-configs`)}
        </label>
        <label>
          Judges
          <select name="evaluator_target" value={f.kind} onChange={set('kind')}>
            <option value="executions">new executions (filters, sampling)</option>
            <option value="dataset_run">the executions of a dataset run</option>
          </select>
        </label>
        {f.kind === 'executions' ? (
          <>
            {LIST_FILTERS.map(([k, title]) => (
              <label>
                {title} (any of, comma-separated)
                <input
                  name={`evaluator_filter_${k}`}
                  placeholder="any"
                  value={f.filters[k]}
                  onInput={(e) => setF({ ...f, filters: { ...f.filters, [k]: (e.target as HTMLInputElement).value } })}
                />
              </label>
            ))}
            <label>
              Status
              <select name="evaluator_filter_status" value={f.status} onChange={set('status')}>
                <option value="">any</option>
                <option value="ok">ok</option>
                <option value="error">error</option>
              </select>
            </label>
            <label>
              Sampling (% of matching executions)
              <input
                name="evaluator_sampling"
                type="number"
                min="0"
                max="100"
                step="any"
                value={f.sampling_pct}
                onInput={set('sampling_pct')}
              />
            </label>
          </>
        ) : (
          <>
            <label>
              Dataset
              <select
                name="evaluator_dataset"
                value={f.dataset_id}
                onChange={(e) => setF({ ...f, dataset_id: (e.target as HTMLSelectElement).value, run_id: '' })}
              >
                <option value="">— pick a dataset —</option>
                {(datasets.data?.items ?? []).map((d) => (
                  <option value={d.dataset_id}>{d.name}</option>
                ))}
              </select>
            </label>
            <label>
              Run
              <select name="evaluator_run" value={f.run_id} onChange={set('run_id')}>
                <option value="">— pick a run —</option>
                {(runs.data?.items ?? []).map((r) => (
                  <option value={r.run_id}>{r.name}</option>
                ))}
              </select>
            </label>
          </>
        )}
        <label class="wide">
          Variables (name=source, space-separated; sources: input, output, expected_output, metadata, metadata.&lt;key&gt;)
          <input name="evaluator_variables" placeholder="question=input answer=output" value={f.variables} onInput={set('variables')} />
        </label>
        <label>
          Daily judge budget (USD, empty: none)
          <input
            name="evaluator_max_daily_cost_usd"
            type="number"
            min="0"
            step="any"
            value={f.max_daily_cost_usd}
            onInput={set('max_daily_cost_usd')}
          />
        </label>
        <div>
          <button type="submit" class="primary" disabled={save.busy}>
            {evaluator ? 'Save evaluator' : 'Create evaluator'}
          </button>{' '}
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Form>
      <ErrorBox error={save.error} title="Evaluator not saved" />
    </Card>
  );
}
