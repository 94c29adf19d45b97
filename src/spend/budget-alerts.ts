// The one sender of budget alerts (budget-engine.ts, WEBHOOK_JOB): each alert of the ledger (budget-repository.ts)
// as its budget's channel carries it — the monthly budget's signed `budget.threshold` /
// `budget.exceeded` event, a scoped budget's signed `budget.scope.threshold` event or Slack
// message — through the same SSRF-guarded POST (webhooks.ts); every attempt recorded on the alert.
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { nanos, usd } from './money.ts';
import type { AlertRow, BudgetRow, BudgetStore } from './budget-repository.ts';
import { deliverRecorded, signedEvent, slackMessage } from './webhooks.ts';

type Message = { body: string; headers: Record<string, string> };

const scopeLabel = (b: BudgetRow) =>
  b.scope_kind === 'project' ? 'the project' : `${b.scope_kind === 'api_key' ? 'API key' : b.scope_kind} "${b.scope_value}"`;

/** The monthly budget's event (docs/spend.md, "Webhooks"): its fields are the contract of `…/budget`. */
function monthlyEvent(a: AlertRow, b: BudgetRow, at: Date): Message {
  return signedEvent(
    `budget.${a.kind}`,
    `evt_budget_${a.alert_id}`,
    {
      project_id: b.project_id,
      month: a.period_start.slice(0, 7),
      kind: a.kind,
      pct_used: Number(a.pct),
      spent_usd: usd(nanos(a.spent_usd)),
      budget_monthly_usd: usd(nanos(a.amount_usd)),
      alert_threshold_pct: a.threshold_pct,
      enforcement_mode: b.enforcement_mode,
      created_at: a.created_at.toISOString(),
    },
    b.webhook_secret,
    at,
  );
}

function scopedMessage(a: AlertRow, b: BudgetRow, at: Date): Message {
  const spent = usd(nanos(a.spent_usd));
  const amount = usd(nanos(a.amount_usd));
  if (b.webhook_format === 'slack')
    return slackMessage(
      `Traceloom budget alert: ${scopeLabel(b)} in project ${b.project_id} reached ${Number(a.pct)}% of its ${b.period === 'day' ? 'daily' : `${b.period}ly`} budget ($${spent} of $${amount}, period starting ${a.period_start}; threshold ${a.threshold_pct}%).`,
    );
  return signedEvent(
    'budget.scope.threshold',
    `evt_budget_scope_${a.alert_id}`,
    {
      project_id: b.project_id,
      budget_id: b.budget_id,
      scope: { kind: b.scope_kind, value: b.scope_kind === 'project' ? null : b.scope_value },
      period: b.period,
      period_start: a.period_start,
      threshold_pct: a.threshold_pct,
      pct_used: Number(a.pct),
      spent_usd: spent,
      amount_usd: amount,
      enforcement_mode: b.enforcement_mode,
      created_at: a.created_at.toISOString(),
    },
    b.webhook_secret,
    at,
  );
}

/** One delivery attempt; throws when it failed, so the runner retries with backoff. */
export async function deliverBudgetAlert(
  store: BudgetStore,
  config: Config['spend'],
  metrics: Pick<Metrics, 'alertDeliveries'>,
  alertId: string,
): Promise<void> {
  const a = await store.alertForDelivery(alertId);
  if (!a || a.delivered_at || !a.budget.webhook_url || a.delivery_attempts >= config.webhookAttempts) return;
  const b = a.budget;
  const message = b.surface === 'monthly' ? monthlyEvent(a, b, new Date()) : scopedMessage(a, b, new Date());
  await deliverRecorded(
    b.webhook_url!,
    message,
    { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, what: `budget alert ${alertId}` },
    (outcome) => metrics.alertDeliveries.inc({ outcome }),
    (r) => store.recordAttempt(alertId, b.webhook_url!, r),
  );
}
