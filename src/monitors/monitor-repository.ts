// PostgreSQL side of monitors (schema/postgres/021): the monitors, the claim of the due ones (one
// evaluator per monitor and tick, whatever the number of workers: FOR UPDATE SKIP LOCKED), the
// state changes and their alerts (one statement each: the conditional UPDATE decides which of two
// concurrent evaluations records the alert), and the alerts' delivery record.
import crypto from 'node:crypto';
import type { Queryable } from '../stores/postgres.ts';
import type { DeliveryResult } from '../spend/webhooks.ts';
import type { WebhookFormat } from '../spend/budget-repository.ts';
import type { ExecutionFilter } from '../evaluators/evaluator.ts';
import type { Condition, Evaluation, Metric, MonitorRow, MonitorState } from './monitor.ts';

export type MonitorAlertRow = {
  alert_id: string;
  monitor_id: string;
  project_id: string;
  kind: 'triggered' | 'resolved';
  resolves_alert_id: string | null;
  evaluation: Evaluation;
  created_at: Date;
  webhook_url: string | null;
  delivery_attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
};

export interface MonitorWrite {
  name: string;
  metric: Metric;
  filter: ExecutionFilter;
  windowMinutes: number;
  condition: Condition;
  intervalMinutes: number;
  enabled: boolean;
  webhookUrl: string | null;
  format: WebhookFormat;
  secret: string;
}

const COLUMNS = `monitor_id::text AS monitor_id, project_id, name, metric, filter, window_minutes, condition, interval_minutes, enabled,
  webhook_url, webhook_format, webhook_secret, state, state_since, last_evaluated_at, last_evaluation, next_evaluation_at, created_at, updated_at`;
const ALERT = `alert_id::text AS alert_id, monitor_id::text AS monitor_id, project_id, kind, resolves_alert_id::text AS resolves_alert_id,
  evaluation, created_at, webhook_url, delivery_attempts, last_status, last_error, last_attempt_at, delivered_at`;
const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
const isAlertId = (id: string) => /^\d{1,18}$/.test(id);
/** A write's columns in the order of $3… of create and update (after the id and the project). */
const written = (w: MonitorWrite) => [
  w.name,
  JSON.stringify(w.metric),
  JSON.stringify(w.filter),
  w.windowMinutes,
  JSON.stringify(w.condition),
  w.intervalMinutes,
  w.enabled,
  w.webhookUrl,
  w.format,
  w.secret,
];
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export function createMonitorRepository(pg: Queryable) {
  return {
    /**
     * The new monitor; 'taken' when the project has a monitor of that name, 'full' when it has
     * `max` monitors already (counted in the insert: concurrent creates may each see room).
     */
    async create(projectId: string, w: MonitorWrite, max: number): Promise<MonitorRow | 'taken' | 'full'> {
      try {
        const [row] = await pg.query<MonitorRow>(
          `INSERT INTO monitors (monitor_id, project_id, name, metric, filter, window_minutes, condition, interval_minutes, enabled,
             webhook_url, webhook_format, webhook_secret)
           SELECT $1, $2, $3, $4::jsonb, $5::jsonb, $6, $7::jsonb, $8, $9, $10, $11, $12
           WHERE (SELECT count(*) FROM monitors WHERE project_id = $2) < $13 RETURNING ${COLUMNS}`,
          [crypto.randomUUID(), projectId, ...written(w), max],
        );
        return row ?? 'full';
      } catch (err) {
        if (isUniqueViolation(err)) return 'taken';
        throw err;
      }
    },
    async list(projectId: string, max: number): Promise<MonitorRow[]> {
      return pg.query<MonitorRow>(`SELECT ${COLUMNS} FROM monitors WHERE project_id = $1 ORDER BY name LIMIT $2`, [projectId, max]);
    },
    async get(projectId: string, id: string): Promise<MonitorRow | undefined> {
      if (!isUuid(id)) return undefined;
      return (await pg.query<MonitorRow>(`SELECT ${COLUMNS} FROM monitors WHERE project_id = $1 AND monitor_id = $2`, [projectId, id]))[0];
    },
    /**
     * Replaces the definition (the caller merged the change into the current one); a changed
     * definition is evaluated at the next tick. 'conflict': another monitor has the name.
     */
    async update(projectId: string, id: string, w: MonitorWrite): Promise<MonitorRow | undefined | 'conflict'> {
      if (!isUuid(id)) return undefined;
      try {
        const [row] = await pg.query<MonitorRow>(
          `UPDATE monitors SET name = $3, metric = $4::jsonb, filter = $5::jsonb, window_minutes = $6, condition = $7::jsonb,
             interval_minutes = $8, enabled = $9, webhook_url = $10, webhook_format = $11, webhook_secret = $12, updated_at = now(),
             next_evaluation_at = now()
           WHERE project_id = $1 AND monitor_id = $2 RETURNING ${COLUMNS}`,
          [projectId, id, ...written(w)],
        );
        return row;
      } catch (err) {
        if (isUniqueViolation(err)) return 'conflict';
        throw err;
      }
    },
    async remove(projectId: string, id: string): Promise<boolean> {
      if (!isUuid(id)) return false;
      return (
        (await pg.query('DELETE FROM monitors WHERE project_id = $1 AND monitor_id = $2 RETURNING monitor_id', [projectId, id])).length > 0
      );
    },

    /**
     * Takes up to `limit` enabled monitors whose evaluation is due and moves their next evaluation
     * one interval on: a monitor another worker is taking at this moment is skipped, not waited for.
     */
    async claimDue(limit: number): Promise<MonitorRow[]> {
      return pg.query<MonitorRow>(
        `UPDATE monitors SET next_evaluation_at = now() + make_interval(mins => interval_minutes)
         WHERE monitor_id IN (
           SELECT monitor_id FROM monitors WHERE enabled AND next_evaluation_at <= now()
           ORDER BY next_evaluation_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING ${COLUMNS}`,
        [limit],
      );
    },

    /** Records an evaluation's figures (state unchanged). */
    async recordEvaluation(monitorId: string, e: Evaluation): Promise<void> {
      await pg.query('UPDATE monitors SET last_evaluated_at = now(), last_evaluation = $2::jsonb WHERE monitor_id = $1', [
        monitorId,
        JSON.stringify(e),
      ]);
    },

    /**
     * Moves the monitor from `from` to the other state and records the alert of the change, in one
     * statement: of two evaluations deciding the same change at once, the second finds the state
     * already changed (the row lock makes it re-read) and records nothing. The alert's id, or
     * undefined when the monitor was not in `from`.
     */
    async transition(monitorId: string, from: MonitorState, e: Evaluation): Promise<string | undefined> {
      const to: MonitorState = from === 'ok' ? 'breached' : 'ok';
      const [row] = await pg.query<{ alert_id: string }>(
        `WITH changed AS (
           UPDATE monitors SET state = $3, state_since = now(), last_evaluated_at = now(), last_evaluation = $4::jsonb
           WHERE monitor_id = $1 AND state = $2 RETURNING monitor_id, project_id, webhook_url)
         INSERT INTO monitor_alerts (monitor_id, project_id, kind, resolves_alert_id, evaluation, webhook_url)
         SELECT monitor_id, project_id, $5,
           CASE WHEN $5 = 'resolved' THEN (SELECT max(alert_id) FROM monitor_alerts WHERE monitor_id = $1 AND kind = 'triggered') END,
           $4::jsonb, webhook_url
         FROM changed RETURNING alert_id::text AS alert_id`,
        [monitorId, from, to, JSON.stringify(e), from === 'ok' ? 'triggered' : 'resolved'],
      );
      return row?.alert_id;
    },

    /** A monitor's alerts, newest first, after the cursor's alert (keyset). */
    async alerts(monitorId: string, limit: number, before?: string): Promise<MonitorAlertRow[]> {
      return pg.query<MonitorAlertRow>(
        `SELECT ${ALERT} FROM monitor_alerts WHERE monitor_id = $1 AND ($2::bigint IS NULL OR alert_id < $2::bigint)
         ORDER BY alert_id DESC LIMIT $3`,
        [monitorId, before ?? null, limit],
      );
    },
    async alertForDelivery(alertId: string): Promise<(MonitorAlertRow & { monitor: MonitorRow }) | undefined> {
      if (!isAlertId(alertId)) return undefined;
      const [a] = await pg.query<MonitorAlertRow>(`SELECT ${ALERT} FROM monitor_alerts WHERE alert_id = $1`, [alertId]);
      if (!a) return undefined;
      const [m] = await pg.query<MonitorRow>(`SELECT ${COLUMNS} FROM monitors WHERE monitor_id = $1`, [a.monitor_id]);
      return m ? { ...a, monitor: m } : undefined;
    },
    /** Alerts of the last 7 days still owed a delivery (re-enqueued by the periodic evaluation). */
    async undelivered(maxAttempts: number): Promise<string[]> {
      const rows = await pg.query<{ alert_id: string }>(
        `SELECT a.alert_id::text AS alert_id FROM monitor_alerts a JOIN monitors m USING (monitor_id)
         WHERE a.delivered_at IS NULL AND m.webhook_url IS NOT NULL AND a.delivery_attempts < $1 AND a.created_at > now() - interval '7 days'
         ORDER BY a.alert_id LIMIT 1000`,
        [maxAttempts],
      );
      return rows.map((r) => r.alert_id);
    },
    async recordAttempt(alertId: string, url: string, r: DeliveryResult): Promise<void> {
      await pg.query(
        `UPDATE monitor_alerts SET delivery_attempts = delivery_attempts + 1, last_status = $2, last_error = $3, last_attempt_at = now(),
           webhook_url = $4, delivered_at = CASE WHEN $5 THEN now() ELSE delivered_at END WHERE alert_id = $1`,
        [alertId, r.status, r.error, url, r.ok],
      );
    },
  };
}

export type MonitorRepository = ReturnType<typeof createMonitorRepository>;
