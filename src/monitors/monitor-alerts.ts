// The sender of monitor alerts (docs/monitors.md, "Alerts"): each alert as its monitor's channel
// carries it — the signed `monitor.triggered` / `monitor.resolved` event or a Slack message —
// through the budget alerts' delivery (spend/webhooks.ts: SSRF-guarded POST, signature, every
// attempt recorded on the alert, retried by the job runner with backoff).
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { deliverRecorded, presentDelivery, signedEvent, slackMessage } from '../spend/webhooks.ts';
import type { MonitorAlertRow, MonitorRepository } from './monitor-repository.ts';
import type { MonitorRow } from './monitor.ts';

export function presentAlert(a: MonitorAlertRow) {
  return {
    alert_id: a.alert_id,
    monitor_id: a.monitor_id,
    kind: a.kind,
    resolves_alert_id: a.resolves_alert_id,
    evaluation: a.evaluation,
    created_at: a.created_at.toISOString(),
    delivery: presentDelivery(a),
  };
}

function message(a: MonitorAlertRow, m: MonitorRow, at: Date) {
  const e = a.evaluation;
  if (m.webhook_format === 'slack') {
    const verb = a.kind === 'triggered' ? 'triggered' : 'resolved';
    return slackMessage(
      `Traceloom monitor "${m.name}" ${verb} in project ${m.project_id} (${m.window_minutes}-minute window ending ${e.evaluated_at}): ${e.reason}.`,
    );
  }
  return signedEvent(
    `monitor.${a.kind}`,
    `evt_monitor_${a.alert_id}`,
    {
      project_id: m.project_id,
      monitor_id: m.monitor_id,
      monitor_name: m.name,
      alert_id: a.alert_id,
      kind: a.kind,
      resolves_alert_id: a.resolves_alert_id,
      metric: m.metric,
      filter: m.filter,
      window_minutes: m.window_minutes,
      condition: m.condition,
      evaluation: e,
      created_at: a.created_at.toISOString(),
    },
    m.webhook_secret,
    at,
  );
}

/** One delivery attempt; throws when it failed, so the runner retries with backoff. */
export async function deliverMonitorAlert(
  store: MonitorRepository,
  config: Config['spend'],
  metrics: Pick<Metrics, 'alertDeliveries'>,
  alertId: string,
): Promise<void> {
  const a = await store.alertForDelivery(alertId);
  if (!a || a.delivered_at || !a.monitor.webhook_url || a.delivery_attempts >= config.webhookAttempts) return;
  const url = a.monitor.webhook_url;
  await deliverRecorded(
    url,
    message(a, a.monitor, new Date()),
    { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, what: `monitor alert ${alertId}` },
    (outcome) => metrics.alertDeliveries.inc({ outcome }),
    (r) => store.recordAttempt(alertId, url, r),
  );
}
