// Evaluators (docs/evaluators.md): each LLM-as-judge evaluator with what it judges, its status —
// queued, done and failed evaluations, the last error — and, for admins, create (evaluator-form.tsx),
// edit, pause, resume and delete.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { int } from '../format.ts';
import { Link } from '../router.tsx';
import type { Evaluator, EvaluatorList, Role } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Load, Time, useAction, useApi } from '../ui.tsx';
import { datasetPath } from './datasets.tsx';
import { EvaluatorForm } from './evaluator-form.tsx';

export function Evaluators({ projectId, role }: { projectId: string; role: Role }) {
  const base = `/api/projects/${enc(projectId)}/evaluators`;
  const list = useApi<EvaluatorList>(base);
  const admin = role === 'admin';
  const settings = `/projects/${enc(projectId)}/settings`;
  // undefined: no form; null: a new evaluator; an evaluator: editing it.
  const [form, setForm] = useState<Evaluator | null | undefined>();
  const remove = useAction(async (ev: Evaluator) => {
    if (!confirm(`Delete the evaluator "${ev.name}"? Its scores stay; its queued judgements are dropped.`)) return;
    await api(`${base}/${enc(ev.evaluator_id)}`, { method: 'DELETE' });
    list.reload();
  });
  const toggle = useAction(async (ev: Evaluator) => {
    await api<Evaluator>(`${base}/${enc(ev.evaluator_id)}/${ev.paused ? 'resume' : 'pause'}`, { method: 'POST' });
    list.reload();
  });
  return (
    <>
      <header class="page">
        <h1>Evaluators</h1>
        <div class="inline">
          {admin && form === undefined && (
            <button type="button" class="primary" onClick={() => setForm(null)}>
              New evaluator
            </button>
          )}
          <button type="button" onClick={list.reload}>
            Refresh
          </button>
        </div>
      </header>
      {form !== undefined && (
        <EvaluatorForm
          key={form?.evaluator_id ?? 'new'}
          projectId={projectId}
          evaluator={form ?? undefined}
          onCancel={() => setForm(undefined)}
          onDone={() => {
            setForm(undefined);
            list.reload();
          }}
        />
      )}
      <ErrorBox error={toggle.error ?? remove.error} />
      <Load state={list} label="Loading evaluators…">
        {(page) =>
          page.items.length === 0 ? (
            <Empty title="No evaluators yet">
              <p>
                An evaluator asks a judge model to score executions. It needs a judge prompt (
                <Link href={`/projects/${enc(projectId)}/prompts?new=1`}>Prompts</Link>), a score config (
                <Link href={`${settings}#score-configs`}>Settings → Score configs</Link>) and a model connection (
                <Link href={`${settings}#model-connections`}>Settings → Model connections</Link>), then{' '}
                {admin ? (
                  <button type="button" class="link" onClick={() => setForm(null)}>
                    New evaluator
                  </button>
                ) : (
                  'an admin creates it here'
                )}
                . The API does the same (docs/evaluators.md):
              </p>
              <pre>{`curl -X POST ${location.origin}${base} \\
  -H 'X-API-Key: tl_...' -H 'Content-Type: application/json' \\
  -d '{"name":"correctness","prompt_id":"judge","connection_id":"…","score_name":"correctness",
       "target":{"kind":"executions","filter":{"agent_id":["support-bot"]},"sampling_rate":0.1}}'`}</pre>
            </Empty>
          ) : (
            <Card>
              <div class="scroll">
                <table class="evaluators">
                  <thead>
                    <tr>
                      <th>Evaluator</th>
                      <th>Judges</th>
                      <th>Score</th>
                      <th>State</th>
                      <th class="num">Queued</th>
                      <th class="num">Done</th>
                      <th class="num">Failed</th>
                      <th>Last error</th>
                      {admin && <th />}
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((ev) => (
                      <tr data-evaluator={ev.name}>
                        <td>
                          {ev.name}
                          <div class="muted small">
                            judge prompt <Link href={`/projects/${enc(projectId)}/prompts/${enc(ev.prompt_id)}`}>{ev.prompt_id}</Link>@
                            {ev.prompt_label}
                          </div>
                          {ev.max_daily_cost_usd !== null && <div class="muted small">daily judge budget ${ev.max_daily_cost_usd}</div>}
                        </td>
                        <td>
                          <Target projectId={projectId} ev={ev} />
                        </td>
                        <td>{ev.score_name}</td>
                        <td>
                          <Badge kind={ev.paused ? 'warn' : 'ok'}>{ev.status.state}</Badge>
                        </td>
                        <td class="num" data-field="queued">
                          {int(ev.status.queued)}
                        </td>
                        <td class="num" data-field="done">
                          {int(ev.status.done)}
                        </td>
                        <td class="num" data-field="failed">
                          {int(ev.status.failed)}
                        </td>
                        <td data-field="last_error">
                          {ev.status.last_error ? (
                            <>
                              <span class="error-text">{ev.status.last_error}</span>
                              <div class="muted small">
                                <Time iso={ev.status.last_error_at} />
                              </div>
                            </>
                          ) : (
                            <span class="muted">none</span>
                          )}
                        </td>
                        {admin && (
                          <td class="actions">
                            <button type="button" disabled={toggle.busy} onClick={() => toggle.run(ev)}>
                              {ev.paused ? 'Resume' : 'Pause'}
                            </button>
                            <button type="button" onClick={() => setForm(ev)}>
                              Edit
                            </button>
                            <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.run(ev)}>
                              Delete
                            </button>
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </Card>
          )
        }
      </Load>
    </>
  );
}

function Target({ projectId, ev }: { projectId: string; ev: Evaluator }) {
  const t = ev.target;
  if (t.kind === 'dataset_run')
    return <Link href={`${datasetPath(projectId, t.dataset_id)}?run=${enc(t.run_id)}`}>the executions of a dataset run</Link>;
  const filters = Object.entries(t.filter)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : String(v)}`)
    .join(', ');
  return (
    <>
      new executions{filters ? ` where ${filters}` : ''}
      <div class="muted small">sampling {Number((t.sampling_rate * 100).toPrecision(6))} %</div>
    </>
  );
}
