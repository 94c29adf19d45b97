// Monitors (docs/monitors.md): `…/monitors` — their definitions, an evaluation on demand, the
// alert history — and the jobs that evaluate the due ones and deliver their alerts. Each
// evaluation computes the figures (evaluation.ts), then tries the state change they call for:
// ok → breached records a `triggered` alert, breached → ok a `resolved` one, each in the statement
// that changes the state (monitor-repository.ts transition), so an alert fires once per breach
// whatever the number of workers and on-demand evaluations; while the state holds nothing is sent.
import type { Config } from '../config.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { badRequest, conflict, DomainError, NotFound, notFound, unprocessable } from '../errors.ts';
import { executionFilter } from '../executions/execution-filter.ts';
import { listFilterOf, type ExecutionFilter } from '../evaluators/evaluator.ts';
import type { PromptService } from '../prompts/service.ts';
import { checkWebhookUrl, newWebhookSecret } from '../spend/webhooks.ts';
import { cursor } from '../datasets/datasets.ts';
import type { MonitorRepository, MonitorWrite } from './monitor-repository.ts';
import { deliverMonitorAlert, presentAlert } from './monitor-alerts.ts';
import { evaluate, type MonitorMetrics } from './evaluation.ts';
import {
  checkMetric,
  DEFAULTS,
  normalizeCondition,
  presentMonitor,
  type Evaluation,
  type MonitorInput,
  type MonitorRow,
  type MonitorUpdate,
} from './monitor.ts';

export const MONITOR_EVALUATE_JOB = 'monitors-evaluate';
export const MONITOR_WEBHOOK_JOB = 'monitor-alert-webhook';

export interface MonitorDeps {
  repository: MonitorRepository;
  reads: MonitorMetrics;
  prompts: Pick<PromptService, 'get' | 'version'>;
  jobs: Pick<JobRunner, 'enqueue'>;
  config: { monitors: Config['monitors']; spend: Config['spend'] };
  metrics: Pick<Metrics, 'alertDeliveries'>;
  logger: Logger;
  /** The evaluation time (the window ends here): the spend clock, replaceable in tests. */
  now: () => Date;
}

/** The filter's own checks (min_cost ≤ max_cost, …), named as the monitor's field. */
function checkFilter(projectId: string, filter: ExecutionFilter): ExecutionFilter {
  try {
    executionFilter(projectId, { ...listFilterOf(filter), limit: 0, offset: 0 }, () => ({ parts: [], params: {} }));
  } catch (err) {
    if (err instanceof DomainError) throw badRequest(`filter.${err.detail}`);
    throw err;
  }
  return filter;
}

export function createMonitors(deps: MonitorDeps) {
  const { repository: repo, config, logger } = deps;

  async function row(projectId: string, id: string): Promise<MonitorRow> {
    const r = await repo.get(projectId, id);
    if (!r) throw notFound('Monitor');
    return r;
  }

  /** 422 for a prompt or a baseline label the monitor names that does not exist. */
  async function checkReferences(projectId: string, w: MonitorWrite): Promise<void> {
    const promptId = w.filter.prompt_id;
    if (!promptId) return;
    try {
      await deps.prompts.get(projectId, promptId);
    } catch (err) {
      if (err instanceof NotFound) throw unprocessable(`filter.prompt_id: prompt ${promptId} does not exist`);
      throw err;
    }
    const c = w.condition;
    if (c.kind !== 'change' || c.against === 'previous_window') return;
    try {
      await deps.prompts.version(projectId, promptId, { kind: 'label', label: c.against.label });
    } catch (err) {
      if (err instanceof NotFound) throw unprocessable(`condition.against.label: prompt ${promptId} has no label "${c.against.label}"`);
      throw err;
    }
  }

  function write(projectId: string, input: MonitorInput, secret: string): MonitorWrite {
    const name = input.name.trim();
    if (!name) throw badRequest('name: must not be blank');
    const metric = checkMetric(input.metric);
    const filter = checkFilter(projectId, input.filter ?? {});
    const format = input.webhook_format ?? 'signed';
    const webhookUrl = input.webhook_url ? checkWebhookUrl(input.webhook_url) : null;
    if (format === 'slack' && !webhookUrl) throw badRequest('webhook_url: is required with webhook_format "slack"');
    return {
      name,
      metric,
      filter,
      windowMinutes: input.window_minutes,
      condition: normalizeCondition(input.condition, metric, filter),
      intervalMinutes: input.interval_minutes ?? DEFAULTS.interval_minutes,
      enabled: input.enabled ?? true,
      webhookUrl,
      format,
      secret,
    };
  }

  async function enqueueDelivery(alertId: string): Promise<void> {
    await deps.jobs
      .enqueue(MONITOR_WEBHOOK_JOB, { alertId }, { jobId: `monitor-alert-${alertId}` })
      .catch((err: Error) =>
        logger.warn(
          { alert_id: alertId, err: { message: err.message } },
          'monitor alert delivery not enqueued; the periodic evaluation will',
        ),
      );
  }

  /**
   * Evaluates the monitor and applies the state change its figures call for (a disabled monitor,
   * asked on demand: figures only). The figures, and the alert the change recorded, if any.
   */
  async function run(m: MonitorRow, apply: boolean): Promise<{ evaluation: Evaluation; alert: { alert_id: string; kind: string } | null }> {
    const evaluation = await evaluate(m, deps.reads, deps.now());
    if (!apply) return { evaluation, alert: null };
    let alert: { alert_id: string; kind: string } | null = null;
    if (evaluation.breached !== null) {
      // Tried from the state the figures contradict, not from the state read before: a change
      // another evaluation made meanwhile makes this one a no-op.
      const from = evaluation.breached ? 'ok' : 'breached';
      const alertId = await repo.transition(m.monitor_id, from, evaluation);
      if (alertId) {
        alert = { alert_id: alertId, kind: evaluation.breached ? 'triggered' : 'resolved' };
        logger.info({ project_id: m.project_id, monitor_id: m.monitor_id, alert_id: alertId, kind: alert.kind }, 'monitor alert');
        if (m.webhook_url) await enqueueDelivery(alertId);
      }
    }
    if (!alert) await repo.recordEvaluation(m.monitor_id, evaluation);
    return { evaluation, alert };
  }

  /** Every due monitor (claimed batch by batch), then the alerts still owed a delivery. */
  async function evaluateDue(): Promise<number> {
    let evaluated = 0;
    for (let round = 0; round < config.monitors.maxRounds; round++) {
      const due = await repo.claimDue(config.monitors.claimBatch);
      for (const m of due) {
        try {
          await run(m, true);
          evaluated++;
        } catch (err) {
          logger.warn(
            { project_id: m.project_id, monitor_id: m.monitor_id, err: { message: (err as Error).message } },
            'monitor evaluation failed',
          );
        }
      }
      if (due.length < config.monitors.claimBatch) break;
    }
    for (const alertId of await repo.undelivered(config.spend.webhookAttempts)) await enqueueDelivery(alertId);
    return evaluated;
  }

  return {
    async create(projectId: string, input: MonitorInput) {
      const secret = newWebhookSecret();
      const w = write(projectId, input, secret);
      await checkReferences(projectId, w);
      const r = await repo.create(projectId, w, config.monitors.maxPerProject);
      if (r === 'taken') throw conflict(`name: the project already has a monitor named "${w.name}"`);
      if (r === 'full')
        throw conflict(
          `the project has ${config.monitors.maxPerProject} monitors, the most it may have (MONITOR_MAX_PER_PROJECT): delete one first`,
        );
      return { ...presentMonitor(r, true), ...(w.format === 'signed' ? { webhook_secret: secret } : {}) };
    },
    async list(projectId: string, canSeeUrl: boolean) {
      return { items: (await repo.list(projectId, config.monitors.maxPerProject)).map((r) => presentMonitor(r, canSeeUrl)) };
    },
    async get(projectId: string, id: string, canSeeUrl: boolean) {
      return presentMonitor(await row(projectId, id), canSeeUrl);
    },
    /** Changes the given fields; a changed definition is evaluated at the next tick, its state kept until then. */
    async update(projectId: string, id: string, input: MonitorUpdate) {
      const current = await row(projectId, id);
      const secret = input.rotate_webhook_secret ? newWebhookSecret() : current.webhook_secret;
      const w = write(
        projectId,
        {
          name: input.name ?? current.name,
          metric: input.metric ?? current.metric,
          filter: input.filter ?? current.filter,
          window_minutes: input.window_minutes ?? current.window_minutes,
          condition: input.condition ?? current.condition,
          interval_minutes: input.interval_minutes ?? current.interval_minutes,
          enabled: input.enabled ?? current.enabled,
          webhook_url: input.webhook_url === undefined ? current.webhook_url : input.webhook_url,
          webhook_format: input.webhook_format ?? current.webhook_format,
        },
        secret,
      );
      await checkReferences(projectId, w);
      const r = await repo.update(projectId, id, w);
      if (r === 'conflict') throw conflict(`name: the project already has a monitor named "${w.name}"`);
      if (!r) throw notFound('Monitor');
      return { ...presentMonitor(r, true), ...(input.rotate_webhook_secret ? { webhook_secret: secret } : {}) };
    },
    async remove(projectId: string, id: string): Promise<void> {
      if (!(await repo.remove(projectId, id))) throw notFound('Monitor');
    },
    /** Evaluates now (state changes and alerts as the job's evaluation; a disabled monitor: figures only). */
    async evaluateNow(projectId: string, id: string) {
      const m = await row(projectId, id);
      const { evaluation, alert } = await run(m, m.enabled);
      const after = await row(projectId, id);
      return { monitor_id: id, state: after.state, state_since: after.state_since.toISOString(), evaluation, alert };
    },
    async alerts(projectId: string, id: string, q: { limit: number; cursor?: string }) {
      const m = await row(projectId, id);
      const rows = await repo.alerts(m.monitor_id, q.limit, cursor.decode(q.cursor));
      const last = rows[rows.length - 1];
      return { items: rows.map(presentAlert), next_cursor: rows.length === q.limit && last ? cursor.encode(last.alert_id) : null };
    },
    evaluateDue,

    processors(): JobProcessor[] {
      return [
        {
          name: MONITOR_EVALUATE_JOB,
          attempts: 1, // the next tick is the retry
          async process() {
            await evaluateDue();
          },
        } as JobProcessor,
        {
          name: MONITOR_WEBHOOK_JOB,
          attempts: config.spend.webhookAttempts,
          backoffMs: config.spend.webhookBackoffMs,
          concurrency: 4,
          async process(data: { alertId: string }) {
            await deliverMonitorAlert(repo, config.spend, deps.metrics, String(data.alertId));
          },
        } as JobProcessor,
      ];
    },
    async schedule(runner: JobRunner): Promise<void> {
      await runner.every(MONITOR_EVALUATE_JOB, config.monitors.intervalMs, {});
    },
  };
}

export type Monitors = ReturnType<typeof createMonitors>;
