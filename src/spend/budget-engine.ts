// The budget engine (docs/spend.md, "Budgets"): every budget of a project — the monthly one of
// `…/budget` and the scoped ones of `…/budgets` — is evaluated by one job (after spend moved, after
// a budget changed, and periodically): its current period's spend, exact, against its amount; the
// alerts due fire once each (the ledger's unique key) and their deliveries are enqueued; the state
// every check reads is published (budget-state.ts). Reads never fire an alert: a check for a
// project no evaluation has published yet computes the state once (shared by concurrent callers)
// and publishes it, firing nothing.
import type { Config } from '../config.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { RedisStore } from '../stores/redis.ts';
import { fromScaled, NANOS } from '../decimal.ts';
import type { DailySpendRepository } from './daily-spend-repository.ts';
import type { SpendRollupRepository } from './spend-rollup-repository.ts';
import type { AlertDue, BudgetRow, BudgetStore, Period } from './budget-repository.ts';
import type { BudgetStatus, PublishedBudget, PublishedState } from './budget-state.ts';
import { createScopedBudgetStateStore } from './scoped-budget-state.ts';
import { deliverBudgetAlert } from './budget-alerts.ts';
import { nanos, percentText } from './money.ts';
import { dayOf, monthBounds } from './window.ts';

export const EVALUATE_JOB = 'budget-evaluate';
/** The one delivery job (named as the scoped budgets' was, so deliveries queued before 016 keep their alert ids). */
export const WEBHOOK_JOB = 'scoped-budget-webhook';
/** Jobs queued by versions before the one engine: evaluations run as EVALUATE_JOB; monthly deliveries (ids of the old ledger) are dropped, the periodic evaluation re-enqueues every alert owed one. */
const LEGACY_EVALUATE_JOB = 'scoped-budget-evaluate';
const LEGACY_WEBHOOK_JOB = 'budget-webhook';
/** After a period ends, its alerts are still evaluated this long (late data, a crossing evaluated after midnight). */
export const PREVIOUS_PERIOD_GRACE_MS = 48 * 3_600_000;
const DAY_MS = 86_400_000;

export type BudgetMetrics = Pick<Metrics, 'budgetEvaluations' | 'budgetAlerts' | 'alertDeliveries'>;

export interface BudgetEngineDeps {
  store: BudgetStore;
  rollups: Pick<SpendRollupRepository, 'scopeSpends'>;
  dailySpend: Pick<DailySpendRepository, 'spentBetween'>;
  redis: RedisStore | undefined;
  jobs: Pick<JobRunner, 'enqueue'>;
  config: Config['spend'];
  now: () => Date;
  logger: Logger;
  metrics: BudgetMetrics;
}

/** [start, next) of the period holding `d` (UTC; weeks start on Monday). */
export function periodBounds(period: Period, d: Date): { start: Date; next: Date } {
  if (period === 'month') return monthBounds(d);
  const day = Math.floor(d.getTime() / DAY_MS) * DAY_MS;
  if (period === 'day') return { start: new Date(day), next: new Date(day + DAY_MS) };
  const monday = day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
  return { start: new Date(monday), next: new Date(monday + 7 * DAY_MS) };
}

export function statusOf(spent: bigint, amount: bigint, thresholds: number[]): BudgetStatus {
  if (spent >= amount) return 'exceeded';
  return thresholds.some((t) => spent * 100n >= amount * BigInt(t)) ? 'alert' : 'ok';
}

/**
 * The alerts a period's spend makes due: each threshold crossed of a scoped budget (keyed by the
 * threshold); for the monthly budget, 'threshold' at its percentage and 'exceeded' at 100 %
 * (keyed by kind: once a month each, whatever the percentage is changed to).
 */
export function alertsDue(b: Pick<BudgetRow, 'surface' | 'thresholds_pct'>, spent: bigint, amount: bigint): AlertDue[] {
  const crossed = (t: number) => spent * 100n >= amount * BigInt(t);
  if (b.surface === 'scoped')
    return b.thresholds_pct.filter(crossed).map((t) => ({ key: String(t), kind: 'threshold' as const, thresholdPct: t }));
  const t = b.thresholds_pct[0]!;
  const due: AlertDue[] = [];
  if (crossed(t)) due.push({ key: 'threshold', kind: 'threshold', thresholdPct: t });
  if (spent >= amount) due.push({ key: 'exceeded', kind: 'exceeded', thresholdPct: t });
  return due;
}

const WORST: BudgetStatus[] = ['ok', 'alert', 'exceeded'];
const chTime = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

export type PeriodSpend = { bounds: { start: Date; next: Date }; spent: bigint };

export function createBudgetEngine(deps: BudgetEngineDeps) {
  const { store, config, logger, metrics, jobs } = deps;
  const state = createScopedBudgetStateStore(deps.redis, config.budgetCheckCacheMs, logger);
  const coldReads = new Map<string, Promise<PublishedState>>();

  /**
   * Spend of each budget over the period holding `at`, exact. The monthly budget reads the days of
   * spend_by_dims (UTC calendar month, by execution start); scoped budgets the rollups by grain, one
   * read per scope kind and period.
   */
  async function spentIn(budgets: BudgetRow[], at: (b: BudgetRow) => Date): Promise<Map<string, PeriodSpend>> {
    const out = new Map<string, PeriodSpend>();
    const groups = new Map<string, BudgetRow[]>();
    for (const b of budgets) {
      const bounds = periodBounds(b.period, at(b));
      if (b.surface === 'monthly') {
        out.set(b.budget_id, {
          bounds,
          spent: nanos(await deps.dailySpend.spentBetween(b.project_id, dayOf(bounds.start), dayOf(bounds.next))),
        });
        continue;
      }
      const k = `${b.scope_kind}\u0000${bounds.start.getTime()}\u0000${b.period}`;
      groups.set(k, [...(groups.get(k) ?? []), b]);
    }
    for (const group of groups.values()) {
      const first = group[0]!;
      const bounds = periodBounds(first.period, at(first));
      const spends = await deps.rollups.scopeSpends(
        first.project_id,
        first.scope_kind,
        group.map((b) => b.scope_value),
        chTime(bounds.start),
        chTime(bounds.next),
      );
      for (const b of group) out.set(b.budget_id, { bounds, spent: nanos(spends.get(b.scope_kind === 'project' ? '' : b.scope_value)) });
    }
    return out;
  }

  /** Fires the alerts a period made due (each once: the ledger's unique key) and enqueues their delivery. */
  async function fire(b: BudgetRow, p: PeriodSpend): Promise<void> {
    const amount = nanos(b.amount_usd);
    for (const due of alertsDue(b, p.spent, amount)) {
      const alertId = await store.fire(b.budget_id, dayOf(p.bounds.start), due, {
        pct: percentText(p.spent, amount),
        spentText: fromScaled(p.spent, NANOS),
        amountText: b.amount_usd,
      });
      if (alertId === undefined) continue; // already fired (here, on another worker, or before a restart)
      metrics.budgetAlerts.inc({ kind: due.kind });
      logger.info(
        { project_id: b.project_id, budget_id: b.budget_id, period_start: dayOf(p.bounds.start), kind: due.kind },
        'budget alert fired',
      );
      if (b.webhook_url) await enqueueDelivery(alertId);
    }
  }

  /** Best effort: the alert row is committed; if the queue is unavailable the periodic evaluation re-enqueues it (store.undelivered). */
  async function enqueueDelivery(alertId: string): Promise<void> {
    await jobs
      .enqueue(WEBHOOK_JOB, { alertId }, { jobId: `scoped-alert-${alertId}` })
      .catch((err: Error) =>
        logger.warn(
          { alert_id: alertId, err: { message: err.message } },
          'budget alert delivery not enqueued; the periodic evaluation will',
        ),
      );
  }

  /** Reads every budget and its spend; fires the due alerts when `fireAlerts`; publishes the state. */
  async function assess(projectId: string, fireAlerts: boolean): Promise<{ state: PublishedState; rows: BudgetRow[] }> {
    const readAt = Date.now(); // wall clock: orders evaluations (the injectable clock says which period)
    const now = deps.now();
    const budgetVersion = await store.clock();
    const rows = await store.list(projectId);
    const current = await spentIn(rows, () => now);
    const budgets: PublishedBudget[] = [];
    for (const b of rows) {
      const c = current.get(b.budget_id)!;
      if (fireAlerts) await fire(b, c);
      budgets.push({
        id: b.budget_id,
        kind: b.scope_kind,
        value: b.scope_value,
        period: b.period,
        surface: b.surface,
        periodStart: c.bounds.start.toISOString(),
        amountNanos: nanos(b.amount_usd).toString(),
        spentNanos: c.spent.toString(),
        thresholds: b.thresholds_pct,
        mode: b.enforcement_mode,
      });
    }
    if (fireAlerts) {
      // Early in a period the previous one is evaluated too, for its alerts only: spend that crossed
      // a threshold in its last minutes, or arrived late, is seen after midnight.
      const late = rows.filter((b) => now.getTime() - periodBounds(b.period, now).start.getTime() < PREVIOUS_PERIOD_GRACE_MS);
      const previous = await spentIn(late, (b) => new Date(periodBounds(b.period, now).start.getTime() - 1));
      for (const b of late) await fire(b, previous.get(b.budget_id)!);
    }
    const s: PublishedState = { budgetVersion, readAt, budgets };
    // Not published when a newer evaluation already was.
    await state.publish(projectId, s);
    return { state: s, rows };
  }

  /** The evaluation job: fires the due alerts (and enqueues their deliveries), publishes the state. Never on a request's path. */
  async function evaluate(projectId: string): Promise<{ state: PublishedState; rows: BudgetRow[] }> {
    try {
      const r = await assess(projectId, true);
      const statuses = r.state.budgets.map((b) => statusOf(BigInt(b.spentNanos), BigInt(b.amountNanos), b.thresholds));
      metrics.budgetEvaluations.inc({ status: WORST[Math.max(0, ...statuses.map((s) => WORST.indexOf(s)))]! });
      return r;
    } catch (err) {
      metrics.budgetEvaluations.inc({ status: 'failed' });
      throw err;
    }
  }

  /** Every project with a budget, then the alerts still owed a delivery. */
  async function evaluateAll(): Promise<void> {
    for (const projectId of await store.projects()) {
      try {
        await evaluate(projectId);
      } catch (err) {
        logger.warn({ project_id: projectId, err: { message: (err as Error).message } }, 'budget evaluation failed');
      }
    }
    for (const alertId of await store.undelivered(config.webhookAttempts))
      await jobs.enqueue(WEBHOOK_JOB, { alertId }, { jobId: `scoped-alert-${alertId}` });
  }

  const evaluateJob = (name: string): JobProcessor =>
    ({
      name,
      attempts: 3,
      backoffMs: 1_000,
      async process(data: { projectId?: string }) {
        if (data?.projectId) await evaluate(data.projectId);
        else await evaluateAll();
      },
    }) as JobProcessor;

  return {
    spentIn,
    evaluate,
    evaluateAll,

    /** The state as the stores say now, published (a cache fill, nothing fired): after a budget changed. */
    refresh: (projectId: string) => assess(projectId, false).then((r) => r.state),

    /** The published state: memory or Redis, never a store scan (one read of the stores when a project is cold). */
    async stateFor(projectId: string): Promise<PublishedState> {
      const known = await state.published(projectId);
      if (known) return known;
      let p = coldReads.get(projectId);
      if (!p) {
        p = assess(projectId, false)
          .then((r) => r.state)
          .finally(() => coldReads.delete(projectId));
        coldReads.set(projectId, p);
      }
      return p;
    },

    /** Asks for an evaluation of the project (once per debounce key); never throws, never waits. */
    requestEvaluation(projectId: string, delayMs: number): void {
      jobs
        .enqueue(EVALUATE_JOB, { projectId }, { jobId: `project-${projectId}`, delayMs })
        .catch((err: Error) =>
          logger.warn(
            { project_id: projectId, err: { message: err.message } },
            'budget evaluation not enqueued; the periodic one will catch up',
          ),
        );
    },

    processors(): JobProcessor[] {
      return [
        evaluateJob(EVALUATE_JOB),
        evaluateJob(LEGACY_EVALUATE_JOB),
        {
          name: WEBHOOK_JOB,
          attempts: config.webhookAttempts,
          backoffMs: config.webhookBackoffMs,
          concurrency: 4,
          async process(data: { alertId: string }) {
            await deliverBudgetAlert(store, config, metrics, String(data.alertId));
          },
        } as JobProcessor,
        { name: LEGACY_WEBHOOK_JOB, async process() {} } as JobProcessor,
      ];
    },

    async schedule(runner: JobRunner): Promise<void> {
      await runner.every(EVALUATE_JOB, config.budgetEvalIntervalMs, {});
      // At boot: warm this node's states and catch up on deliveries owed.
      await runner.enqueue(EVALUATE_JOB, {}, { jobId: 'boot' });
    },
  };
}

export type BudgetEngine = ReturnType<typeof createBudgetEngine>;
