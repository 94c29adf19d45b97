// Delivery of scoped budget alerts (job scoped-budget-webhook): the signed JSON event (the
// project budget's signature scheme) or a Slack incoming-webhook message, through the same
// SSRF-guarded POST; every attempt recorded on the alert.
import type { Config } from '../config.ts';
import { nanos, usd } from './money.ts';
import type { ScopedBudgetStore, ScopeKind } from './scoped-budget-store.ts';
import { deliver, signedEvent, slackMessage } from './webhooks.ts';

const scopeLabel = (b: { scope_kind: ScopeKind; scope_value: string }) =>
  b.scope_kind === 'project' ? 'the project' : `${b.scope_kind === 'api_key' ? 'API key' : b.scope_kind} "${b.scope_value}"`;

/** One delivery attempt; throws when it failed, so the runner retries with backoff. */
export async function deliverScopedAlert(store: ScopedBudgetStore, config: Config['spend'], alertId: string): Promise<void> {
  const a = await store.alertForDelivery(alertId);
  if (!a || a.delivered_at || !a.budget.webhook_url || a.delivery_attempts >= config.webhookAttempts) return;
  const b = a.budget;
  const eventId = `evt_budget_scope_${a.alert_id}`;
  const spent = usd(nanos(a.spent_usd));
  const amount = usd(nanos(a.amount_usd));
  const message =
    b.webhook_format === 'slack'
      ? slackMessage(
          `Traceloom budget alert: ${scopeLabel(b)} in project ${b.project_id} reached ${Number(a.pct)}% of its ${b.period === 'day' ? 'daily' : `${b.period}ly`} budget ($${spent} of $${amount}, period starting ${a.period_start}; threshold ${a.threshold_pct}%).`,
        )
      : signedEvent(
          'budget.scope.threshold',
          eventId,
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
          new Date(),
        );
  const r = await deliver(b.webhook_url!, message.body, message.headers, {
    timeoutMs: config.webhookTimeoutMs,
    allowPrivate: config.webhookAllowPrivate,
  });
  await store.recordAttempt(alertId, r);
  if (!r.ok) throw new Error(`webhook delivery of scoped alert ${alertId} failed: ${r.error}`);
}
