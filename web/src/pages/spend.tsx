// Spend: daily cost over a window of UTC days (zero days shown), by model, top prompts, unpriced
// executions; the month-to-date budget gauge with its alerts; export of the window's executions.
import { enc, query } from '../api.ts';
import { BudgetGauge, DailyCostChart } from '../charts.tsx';
import { int, pct, usd } from '../format.ts';
import { Link, navigate, useLocation, withParams } from '../router.tsx';
import type { Budget, ProjectStats, Role } from '../types.ts';
import { Badge, Card, Empty, Load, Stat, TableScroll, Time, useApi } from '../ui.tsx';
import { ExportButtons } from './export.tsx';
import { Unpriced } from '../unpriced.tsx';

const WINDOWS = [7, 30, 90];

export function Spend({ projectId, role }: { projectId: string; role: Role }) {
  const loc = useLocation();
  const days = Number(loc.params.get('days')) || 30;
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const p = `/api/projects/${enc(projectId)}`;
  const stats = useApi<ProjectStats>(`${p}/stats${query({ start })}`);
  const budget = useApi<Budget>(`${p}/budget`);
  const windowFilters = new URLSearchParams({ start: `${start}T00:00:00Z` });
  return (
    <>
      <header class="page">
        <h1>Spend</h1>
        <div class="inline">
          {WINDOWS.map((n) => (
            <button
              type="button"
              class={n === days ? 'active' : ''}
              onClick={() => navigate(withParams(loc, { days: n === 30 ? null : String(n) }), { replace: true })}
            >
              {n} days
            </button>
          ))}
          <ExportButtons path={`${p}/executions/export`} filters={windowFilters} />
        </div>
      </header>
      <div class="grid spend-top">
        <Card title="This month's budget" class="budget">
          <Load state={budget} label="Loading the budget…">
            {(b) => <BudgetView b={b} projectId={projectId} role={role} />}
          </Load>
        </Card>
        <Card title={`Last ${days} days (UTC days)`}>
          <Load state={stats} label="Loading spend…">
            {(s) => (
              <>
                <div class="stats">
                  <Stat label="Cost" value={usd(s.total_cost)} title={`${s.total_cost} USD`} />
                  <Stat label="Executions" value={int(s.total_executions)} />
                  <Stat label="Avg per execution" value={usd(s.avg_cost_per_execution)} />
                  <Stat label="Tokens in / out" value={`${int(s.total_tokens_in)} / ${int(s.total_tokens_out)}`} />
                  <Stat
                    label="Unpriced executions"
                    value={
                      s.unpriced_executions > 0 ? (
                        <Link href={`/projects/${enc(projectId)}/executions?max_cost=0&start=${start}T00:00:00Z`}>
                          <Badge kind="warn">{int(s.unpriced_executions)}</Badge>
                        </Link>
                      ) : (
                        '0'
                      )
                    }
                    title="Executions of models without a price count at $0, never a guess: set a project price in Settings"
                  />
                </div>
                {s.total_executions === 0 ? (
                  <Empty title="No spend in this window">
                    <p>Costs appear here as executions arrive (Executions shows how to send them).</p>
                  </Empty>
                ) : (
                  <DailyCostChart days={s.daily_costs} />
                )}
              </>
            )}
          </Load>
        </Card>
      </div>
      <Load state={stats}>
        {(s) => (
          <div class="grid two">
            <Card title="By model">
              {s.by_model.length === 0 ? (
                <p class="muted">No executions.</p>
              ) : (
                <TableScroll>
                  <table>
                    <thead>
                      <tr>
                        <th>Provider / model</th>
                        <th class="num">Executions</th>
                        <th class="num">Cost</th>
                        <th class="num">Share</th>
                      </tr>
                    </thead>
                    <tbody>
                      {s.by_model.map((m) => (
                        <tr data-model={m.model}>
                          <td>
                            <Link href={`/projects/${enc(projectId)}/executions?model=${enc(m.model)}&start=${start}T00:00:00Z`}>
                              <span class="muted">{m.provider || '—'}</span> {m.model || '—'}
                            </Link>
                          </td>
                          <td class="num">{int(m.execution_count)}</td>
                          {m.unpriced_executions >= m.execution_count && m.cost === 0 ? (
                            <>
                              <td class="num" data-field="cost">
                                <Unpriced projectId={projectId} />
                              </td>
                              <td class="num">—</td>
                            </>
                          ) : (
                            <>
                              <td class="num" data-field="cost">
                                {usd(m.cost)}
                                {m.unpriced_executions > 0 && (
                                  <div class="small">
                                    + <Unpriced projectId={projectId} count={m.unpriced_executions} />
                                  </div>
                                )}
                              </td>
                              <td class="num">{s.total_cost > 0 ? pct((m.cost / s.total_cost) * 100) : '—'}</td>
                            </>
                          )}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )}
            </Card>
            <Card title="Top prompts">
              {s.top_prompts.length === 0 ? (
                <p class="muted">No execution recorded a prompt template in this window.</p>
              ) : (
                <TableScroll>
                  <table>
                    <thead>
                      <tr>
                        <th>Prompt</th>
                        <th class="num">Executions</th>
                        <th class="num">Cost</th>
                        <th class="num">Avg</th>
                      </tr>
                    </thead>
                    <tbody>
                      {s.top_prompts.map((t) => (
                        <tr>
                          <td>
                            <Link href={`/projects/${enc(projectId)}/prompts/${enc(t.prompt_id)}?tab=analytics`}>{t.prompt_id}</Link>
                          </td>
                          <td class="num">{int(t.execution_count)}</td>
                          <td class="num">{usd(t.cost)}</td>
                          <td class="num">{usd(t.avg_cost)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )}
            </Card>
          </div>
        )}
      </Load>
      <Load state={budget}>{(b) => <Alerts b={b} />}</Load>
    </>
  );
}

export function BudgetView({ b, projectId, role }: { b: Budget; projectId: string; role: Role }) {
  if (b.budget_monthly_usd === null) {
    return (
      <Empty title="No budget set">
        <p>
          Spent this month ({b.month}): <strong>{usd(b.spent_usd)}</strong>.
        </p>
        {role === 'admin' ? (
          <p>
            <Link href={`/projects/${enc(projectId)}/settings`}>Set a monthly budget</Link> to get alerts (and, if you want, block calls) at
            a threshold.
          </p>
        ) : (
          <p>An admin of the project can set a monthly budget in Settings.</p>
        )}
      </Empty>
    );
  }
  return (
    <div class="budget-view">
      <BudgetGauge
        pctUsed={b.pct_used ?? 0}
        threshold={b.alert_threshold_pct ?? 100}
        status={b.status}
        spent={b.spent_usd}
        budget={b.budget_monthly_usd}
      />
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge kind={b.status === 'ok' ? 'ok' : b.status === 'alert' ? 'warn' : 'bad'}>{b.status}</Badge>{' '}
          {b.blocked && <Badge kind="bad">calls blocked</Badge>}
        </dd>
        <dt>Month (UTC)</dt>
        <dd>{b.month}</dd>
        <dt>Remaining</dt>
        <dd>{usd(b.remaining_usd)}</dd>
        <dt>Alert at</dt>
        <dd>
          {b.alert_threshold_pct}% · {b.enforcement_mode === 'block' ? 'blocks calls when exceeded' : 'alerts only'}
        </dd>
        <dt>Resets</dt>
        <dd>
          <Time iso={b.reset_at} />
        </dd>
      </dl>
    </div>
  );
}

function Alerts({ b }: { b: Budget }) {
  if (b.budget_monthly_usd === null && b.alerts.length === 0) return null;
  return (
    <Card title="Budget alerts">
      {b.alerts.length === 0 ? (
        <p class="muted">No alert yet: one is sent when the month's spend crosses the threshold, and one when it exceeds the budget.</p>
      ) : (
        <TableScroll>
          <table>
            <thead>
              <tr>
                <th>At</th>
                <th>Kind</th>
                <th class="num">Used</th>
                <th class="num">Spent / budget</th>
                <th>Webhook delivery</th>
              </tr>
            </thead>
            <tbody>
              {b.alerts.map((a) => (
                <tr>
                  <td>
                    <Time iso={a.at} />
                  </td>
                  <td>
                    <Badge kind={a.kind === 'exceeded' ? 'bad' : 'warn'}>{a.kind}</Badge>
                  </td>
                  <td class="num">{pct(a.pct)}</td>
                  <td class="num">
                    {usd(a.spent_usd)} / {usd(a.budget_monthly_usd)}
                  </td>
                  <td>
                    {a.delivery.delivered_at ? (
                      <>
                        delivered <Time iso={a.delivery.delivered_at} />
                      </>
                    ) : a.delivery.attempts > 0 ? (
                      `${a.delivery.attempts} attempt(s), last: ${a.delivery.last_status ?? a.delivery.last_error ?? '—'}`
                    ) : b.webhook_url ? (
                      'pending'
                    ) : (
                      'no webhook'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}
