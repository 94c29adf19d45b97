// Monitors (docs/monitors.md): each monitor with its metric, window, condition, state and last
// evaluation; its alert history (triggered, resolved, with the figures and the delivery) on
// demand, older pages by cursor; for members and admins, an evaluation now.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import type { Monitor, MonitorAlertList, MonitorList, Role } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Load, Time, useAction, useApi } from '../ui.tsx';

const conditionText = (m: Monitor) => {
  const c = m.condition;
  if (c.kind === 'threshold') return `${String(c.op)} ${String(c.value)}`;
  const against = c.against === 'previous_window' ? 'the previous window' : `label "${(c.against as { label: string }).label}"`;
  return `significant ${c.direction === 'any' ? 'change' : String(c.direction)} against ${against} (α ${String(c.alpha)})`;
};

const metricText = (m: Monitor) =>
  m.metric.score_name ? `${m.metric.kind} of "${m.metric.score_name}"${m.metric.value ? ` = ${m.metric.value}` : ''}` : m.metric.kind;

export function Monitors({ projectId, role }: { projectId: string; role: Role }) {
  const base = `/api/projects/${enc(projectId)}/monitors`;
  const list = useApi<MonitorList>(base);
  const evaluate = useAction(async (m: Monitor) => {
    await api(`${base}/${enc(m.monitor_id)}/evaluate`, { method: 'POST' });
    list.reload();
  });
  return (
    <>
      <header class="page">
        <h1>Monitors</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </header>
      <ErrorBox error={evaluate.error} />
      <Load state={list} label="Loading monitors…">
        {(page) =>
          page.items.length === 0 ? (
            <Empty title="No monitors yet">
              <p>A monitor watches a metric of your executions over a window and alerts once per breach — see docs/monitors.md:</p>
              <pre>{`curl -X POST ${location.origin}${base} \\
  -H 'X-API-Key: tl_...' -H 'Content-Type: application/json' \\
  -d '{"name":"checkout errors","metric":{"kind":"error_rate"},"filter":{"agent_id":["checkout"]},
       "window_minutes":60,"condition":{"kind":"change","direction":"increase"},"webhook_url":"https://…"}'`}</pre>
            </Empty>
          ) : (
            page.items.map((m) => <MonitorCard key={m.monitor_id} base={base} m={m} canEvaluate={role !== 'viewer'} evaluate={evaluate} />)
          )
        }
      </Load>
    </>
  );
}

function MonitorCard({
  base,
  m,
  canEvaluate,
  evaluate,
}: {
  base: string;
  m: Monitor;
  canEvaluate: boolean;
  evaluate: { busy: boolean; run(m: Monitor): unknown };
}) {
  const [open, setOpen] = useState(false);
  const e = m.last_evaluation;
  return (
    <Card
      class="monitor-card"
      title={
        <span data-monitor={m.name}>
          {m.name} <Badge kind={m.state === 'breached' ? 'bad' : 'ok'}>{m.state}</Badge>
          {!m.enabled && <Badge kind="warn">disabled</Badge>}
        </span>
      }
      actions={
        <>
          <button type="button" onClick={() => setOpen(!open)}>
            {open ? 'Hide history' : 'History'}
          </button>
          {canEvaluate && (
            <button type="button" disabled={evaluate.busy} onClick={() => evaluate.run(m)}>
              Evaluate now
            </button>
          )}
        </>
      }
    >
      <p>
        {metricText(m)} over {m.window_minutes} minutes, {conditionText(m)}; every {m.interval_minutes} min
        <span class="muted small">
          {' '}
          — {m.state} since <Time iso={m.state_since} />
        </span>
      </p>
      <p class="muted small" data-field="last_evaluation">
        {e ? (
          <>
            <Time iso={e.evaluated_at} />: {e.reason}
          </>
        ) : (
          'not evaluated yet'
        )}
      </p>
      {/* read again when the state changed (a new alert) */}
      {open && <History key={m.state_since} path={`${base}/${enc(m.monitor_id)}/alerts`} />}
    </Card>
  );
}

function History({ path }: { path: string }) {
  const [cursor, setCursor] = useState<string | null>(null);
  const page = useApi<MonitorAlertList>(cursor ? `${path}?limit=20&cursor=${enc(cursor)}` : `${path}?limit=20`);
  return (
    <Load state={page} label="Loading alerts…">
      {(p) =>
        p.items.length === 0 ? (
          <p class="muted">No alert yet</p>
        ) : (
          <table class="monitor-alerts">
            <thead>
              <tr>
                <th>When</th>
                <th>Alert</th>
                <th>Figures</th>
                <th>Delivery</th>
              </tr>
            </thead>
            <tbody>
              {p.items.map((a) => (
                <tr data-alert={a.kind}>
                  <td>
                    <Time iso={a.created_at} />
                  </td>
                  <td>
                    <Badge kind={a.kind === 'triggered' ? 'bad' : 'ok'}>{a.kind}</Badge>
                  </td>
                  <td>{a.evaluation.reason}</td>
                  <td>
                    {a.delivery.delivered_at
                      ? 'delivered'
                      : a.delivery.attempts
                        ? `failed ×${a.delivery.attempts}: ${a.delivery.last_error ?? ''}`
                        : 'not sent'}
                  </td>
                </tr>
              ))}
              {p.next_cursor && (
                <tr>
                  <td colSpan={4}>
                    <button type="button" onClick={() => setCursor(p.next_cursor)}>
                      Older
                    </button>
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        )
      }
    </Load>
  );
}
