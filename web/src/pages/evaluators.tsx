// Evaluators (docs/evaluators.md): each LLM-as-judge evaluator with what it judges, its status —
// queued, done and failed evaluations, the last error — and, for admins, pause and resume.
import { api, enc } from '../api.ts';
import { int } from '../format.ts';
import { Link } from '../router.tsx';
import type { Evaluator, EvaluatorList, Role } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Load, Time, useAction, useApi } from '../ui.tsx';
import { datasetPath } from './datasets.tsx';

export function Evaluators({ projectId, role }: { projectId: string; role: Role }) {
  const base = `/api/projects/${enc(projectId)}/evaluators`;
  const list = useApi<EvaluatorList>(base);
  const toggle = useAction(async (ev: Evaluator) => {
    await api<Evaluator>(`${base}/${enc(ev.evaluator_id)}/${ev.paused ? 'resume' : 'pause'}`, { method: 'POST' });
    list.reload();
  });
  return (
    <>
      <header class="page">
        <h1>Evaluators</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </header>
      <ErrorBox error={toggle.error} />
      <Load state={list} label="Loading evaluators…">
        {(page) =>
          page.items.length === 0 ? (
            <Empty title="No evaluators yet">
              <p>
                An evaluator asks a judge model to score executions. Create a judge prompt (Prompts), a score config (Settings), a model
                connection, then the evaluator — see docs/evaluators.md:
              </p>
              <pre>{`curl -X POST ${location.origin}${base} \\
  -H 'X-API-Key: tl_...' -H 'Content-Type: application/json' \\
  -d '{"name":"correctness","prompt_id":"judge","connection_id":"…","score_name":"correctness",
       "target":{"kind":"executions","filter":{"agent_id":["support-bot"]},"sampling_rate":0.1}}'`}</pre>
            </Empty>
          ) : (
            <Card>
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
                    {role === 'admin' && <th />}
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
                      {role === 'admin' && (
                        <td>
                          <button type="button" disabled={toggle.busy} onClick={() => toggle.run(ev)}>
                            {ev.paused ? 'Resume' : 'Pause'}
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
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
