// Budgets: configuration (admin), evaluation of month-to-date spend against the budget, alerts
// fired once per project, month and kind and POSTed to the webhook, and the pre-flight check.
// Month-to-date spend comes from daily_spend (UTC calendar month, by execution start time), never
// from raw executions. No Koa here.
// Reads are pure: GET …/budget, the check and the render's enforcement compute what they show
// from the stores (or the published state) and never fire an alert nor enqueue a delivery. Alerts
// fire only in the evaluation job (EVALUATE_JOB: after spend moved, after a budget change, and
// periodically). A check for a project no evaluation has published yet computes its state once
// (shared by concurrent callers) and publishes it: a cache fill, with no alert (docs/spend.md).
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { badRequest, budgetExceeded } from '../errors.ts';
import type { DailySpendRepository } from './daily-spend.ts';
import { fromScaled, NANOS, toScaled } from '../pricing/decimal.ts';
import type { JobRunner } from '../jobs/runner.ts';
import type { Metrics } from '../metrics.ts';
import type { AlertRow, BudgetRow, BudgetStore, EnforcementMode } from './budget-store.ts';
import type { BudgetState, BudgetStateStore, BudgetStatus } from './budget-state.ts';
import { nanos, percent, percentText, usd } from './money.ts';
import { monthBounds, monthOf, dayOf } from './window.ts';
import { alertDelivery, checkWebhookUrl, deliver, newWebhookSecret } from './webhooks.ts';

export const WEBHOOK_JOB = 'budget-webhook';
export const EVALUATE_JOB = 'budget-evaluate';
/** During the first 48 hours of a month, evaluations also fire the previous month's due alerts. */
export const PREVIOUS_MONTH_GRACE_MS = 48 * 3_600_000;

export interface BudgetInput {
  budget_monthly_usd: number;
  alert_threshold_pct: number;
  enforcement_mode: EnforcementMode;
  webhook_url?: string | null;
  rotate_webhook_secret?: boolean;
}

export interface Clock {
  now(): Date;
}

/** What budgets count (src/metrics.ts): evaluations by status, alerts fired, webhook deliveries. */
export type BudgetMetrics = Pick<Metrics, 'budgetEvaluations' | 'budgetAlerts' | 'alertDeliveries'>;

interface Deps {
  metrics: BudgetMetrics;
  store: BudgetStore;
  state: BudgetStateStore;
  spend: Pick<DailySpendRepository, 'spentBetween'>;
  jobs: Pick<JobRunner, 'enqueue'>;
  config: Config['spend'];
  clock: Clock;
  logger: Logger;
}

function statusOf(budget: bigint | null, spent: bigint, thresholdPct: number | null): BudgetStatus {
  if (budget === null) return 'ok';
  if (spent >= budget) return 'exceeded';
  if (spent * 100n >= BigInt(thresholdPct ?? 100) * budget) return 'alert';
  return 'ok';
}

/** The state as of `month`: a state evaluated in an earlier month is a clean new month. */
function current(s: BudgetState, month: string): BudgetState {
  return s.month === month ? s : { ...s, month, spentNanos: '0', status: 'ok' };
}

function view(s: BudgetState) {
  const budget = s.budgetNanos === null ? null : BigInt(s.budgetNanos);
  const spent = BigInt(s.spentNanos);
  const remaining = budget === null ? null : budget > spent ? budget - spent : 0n;
  return {
    budget,
    spent,
    remaining_usd: remaining === null ? null : usd(remaining),
    pct_used: budget === null ? null : percent(spent, budget),
    blocked: s.mode === 'block' && s.status === 'exceeded',
  };
}

const presentAlert = (a: AlertRow) => ({
  kind: a.kind,
  month: a.month,
  pct: Number(a.pct),
  spent_usd: usd(nanos(a.spent_usd)),
  budget_monthly_usd: usd(nanos(a.budget_monthly_usd)),
  at: a.created_at.toISOString(),
  delivery: {
    attempts: a.delivery_attempts,
    last_status: a.last_status,
    last_error: a.last_error,
    last_attempt_at: a.last_attempt_at?.toISOString() ?? null,
    delivered_at: a.delivered_at?.toISOString() ?? null,
  },
});

export function createBudgets(d: Deps) {
  const { store, state, spend, jobs, config, clock, logger, metrics } = d;
  const coldChecks = new Map<string, Promise<BudgetState>>();

  async function monthSpend(projectId: string, now: Date): Promise<bigint> {
    const b = monthBounds(now);
    return nanos(await spend.spentBetween(projectId, dayOf(b.start), dayOf(b.next)));
  }

  async function fire(b: BudgetRow, month: string, kind: 'threshold' | 'exceeded', spent: bigint, budget: bigint): Promise<void> {
    const id = await store.fire(b.project_id, month, kind, {
      pctText: percentText(spent, budget),
      spentText: fromScaled(spent, NANOS),
      budgetText: b.budget_monthly_usd,
      thresholdPct: b.alert_threshold_pct,
    });
    if (id === undefined) return; // already fired this month (here, on another worker, or before a restart)
    metrics.budgetAlerts.inc({ kind });
    logger.info({ project_id: b.project_id, month, kind }, 'budget alert fired');
    if (!b.webhook_url) return;
    // Best effort: the alert row is committed; if the queue is unavailable the periodic
    // evaluation re-enqueues every alert still owed a delivery (store.undelivered).
    try {
      await jobs.enqueue(WEBHOOK_JOB, { alertId: id }, { jobId: `alert-${id}` });
    } catch (err) {
      logger.warn(
        { project_id: b.project_id, month, kind, err: { message: (err as Error).message } },
        'budget alert delivery not enqueued; the periodic evaluation will retry',
      );
    }
  }

  /** Asks for an evaluation of the project (once per debounce key); never throws, never waits. */
  function requestEvaluation(projectId: string, delayMs: number): void {
    jobs
      .enqueue(EVALUATE_JOB, { projectId }, { jobId: `project-${projectId}`, delayMs })
      .catch((err: Error) =>
        logger.warn(
          { project_id: projectId, err: { message: err.message } },
          'budget evaluation not enqueued; the periodic one will catch up',
        ),
      );
  }

  /**
   * The evaluation job: month-to-date spend against the budget; fires due alerts (and enqueues
   * their deliveries), publishes the state for checks. Never called on a request's path.
   */
  async function evaluate(projectId: string): Promise<{ state: BudgetState; budget: BudgetRow | undefined }> {
    try {
      const r = await evaluateOnce(projectId);
      metrics.budgetEvaluations.inc({ status: r.state.status });
      return r;
    } catch (err) {
      metrics.budgetEvaluations.inc({ status: 'failed' });
      throw err;
    }
  }

  /**
   * What the stores say now: the budget row and this month's state. Reads only. `budgetedOnly`:
   * the month's spend is read only when there is a budget (the evaluation job, which runs after
   * every write that moves spend: a project without a budget has nothing to evaluate, and its
   * published state, which says only "allowed", does not need the spend scan).
   */
  async function assess(
    projectId: string,
    opts: { budgetedOnly?: boolean } = {},
  ): Promise<{ state: BudgetState; budget: BudgetRow | undefined; spent: bigint; now: Date }> {
    const readAt = Date.now(); // wall clock: orders evaluations (the injectable clock says which month)
    const now = clock.now();
    const month = monthOf(now);
    const budgetRead = store.get(projectId);
    const spentRead = opts.budgetedOnly ? budgetRead.then((b) => (b ? monthSpend(projectId, now) : 0n)) : monthSpend(projectId, now);
    const [budget, spent] = await Promise.all([budgetRead, spentRead]);
    const budgetNanos = budget ? nanos(budget.budget_monthly_usd) : null;
    const status = statusOf(budgetNanos, spent, budget?.alert_threshold_pct ?? null);
    const state: BudgetState = {
      month,
      budgetNanos: budgetNanos === null ? null : String(budgetNanos),
      spentNanos: String(spent),
      thresholdPct: budget?.alert_threshold_pct ?? null,
      mode: budget?.enforcement_mode ?? null,
      status,
      budgetVersion: budget ? new Date(budget.updated_at).getTime() : 0,
      readAt,
    };
    return { state, budget, spent, now };
  }

  async function evaluateOnce(projectId: string): Promise<{ state: BudgetState; budget: BudgetRow | undefined }> {
    const { state: s, budget, spent, now } = await assess(projectId, { budgetedOnly: true });
    const month = s.month;
    const status = s.status;
    const budgetNanos = s.budgetNanos === null ? null : BigInt(s.budgetNanos);
    if (budget && budgetNanos !== null) {
      if (status !== 'ok') await fire(budget, month, 'threshold', spent, budgetNanos);
      if (status === 'exceeded') await fire(budget, month, 'exceeded', spent, budgetNanos);
      // Early in a month the previous one is evaluated too (for its alerts only): spend that
      // crossed a threshold in its last minutes, or arrived late, is seen after midnight. The
      // unique key of alerts keeps this from firing twice; the published state is this month's.
      const start = monthBounds(now).start;
      if (now.getTime() - start.getTime() < PREVIOUS_MONTH_GRACE_MS) {
        const prevAt = new Date(start.getTime() - 1);
        const prevSpent = await monthSpend(projectId, prevAt);
        const prevStatus = statusOf(budgetNanos, prevSpent, budget.alert_threshold_pct);
        if (prevStatus !== 'ok') await fire(budget, monthOf(prevAt), 'threshold', prevSpent, budgetNanos);
        if (prevStatus === 'exceeded') await fire(budget, monthOf(prevAt), 'exceeded', prevSpent, budgetNanos);
      }
    }
    // Not published when a newer evaluation (a later budget row, or later reads) already was.
    await state.set(projectId, s);
    return { state: s, budget };
  }

  async function present(projectId: string, r: { state: BudgetState; budget: BudgetRow | undefined }, revealWebhook: boolean) {
    const v = view(r.state);
    return {
      budget_monthly_usd: v.budget === null ? null : usd(v.budget),
      alert_threshold_pct: r.state.thresholdPct,
      enforcement_mode: r.state.mode,
      // A webhook URL often is a secret itself (Slack-style tokens in the path): admins only.
      webhook_url: r.budget?.webhook_url ? (revealWebhook ? r.budget.webhook_url : `${new URL(r.budget.webhook_url).origin}/…`) : null,
      month: r.state.month,
      spent_usd: usd(v.spent),
      remaining_usd: v.remaining_usd,
      pct_used: v.pct_used,
      status: r.state.status,
      blocked: v.blocked,
      reset_at: monthBounds(clock.now()).next.toISOString(),
      alerts: (await store.alerts(projectId)).map(presentAlert),
    };
  }

  async function stateFor(projectId: string): Promise<BudgetState> {
    const known = await state.get(projectId);
    if (known) return known;
    // Cold: no node evaluated this project yet. One read of the stores (shared by concurrent
    // callers) computes the state and publishes it, firing nothing; every later check is answered
    // from memory or Redis.
    let p = coldChecks.get(projectId);
    if (!p) {
      p = assess(projectId)
        .then(async (r) => {
          await state.set(projectId, r.state);
          return r.state;
        })
        .finally(() => coldChecks.delete(projectId));
      coldChecks.set(projectId, p);
    }
    return p;
  }

  /** The pre-flight check: memory or Redis, never a store scan (one read of the stores when a project is cold). */
  async function check(projectId: string) {
    const now = clock.now();
    const s = current(await stateFor(projectId), monthOf(now));
    const v = view(s);
    return {
      allowed: !v.blocked,
      status: s.status,
      enforcement_mode: s.mode,
      remaining_usd: v.remaining_usd,
      reset_at: monthBounds(now).next.toISOString(),
    };
  }

  return {
    evaluate,
    requestEvaluation,

    /** The budget with this month's figures, read from the stores (no alert fired, nothing published). */
    async get(projectId: string, revealWebhook: boolean) {
      return present(projectId, await assess(projectId), revealWebhook);
    },

    async put(projectId: string, input: BudgetInput) {
      const budgetNanos = toScaled(input.budget_monthly_usd, NANOS);
      if (budgetNanos <= 0n) throw badRequest('budget_monthly_usd: must be greater than 0 (at most 9 decimal places count)');
      const webhookUrl =
        input.webhook_url === undefined || input.webhook_url === null ? input.webhook_url : checkWebhookUrl(input.webhook_url);
      const row = await store.upsert(projectId, {
        budgetNanosText: fromScaled(budgetNanos, NANOS),
        thresholdPct: input.alert_threshold_pct,
        mode: input.enforcement_mode,
        webhookUrl,
        newSecret: newWebhookSecret(),
        rotateSecret: input.rotate_webhook_secret === true,
      });
      // The new budget is in force for checks at once (its state published); its alerts, if any
      // are due, fire in the evaluation job.
      const r = await assess(projectId);
      await state.set(projectId, r.state);
      requestEvaluation(projectId, 0);
      const body = await present(projectId, r, true);
      // The signing secret is shown when it is created or rotated, never again.
      return row.inserted || input.rotate_webhook_secret ? { ...body, webhook_secret: row.webhook_secret } : body;
    },

    check,

    /** Throws 402 when the project's budget is exceeded in block mode (prompt rendering). */
    async enforce(projectId: string): Promise<void> {
      const c = await check(projectId);
      if (c.allowed) return;
      const s = current(await stateFor(projectId), monthOf(clock.now()));
      throw budgetExceeded(
        `Budget exceeded - the monthly budget of $${fromScaled(BigInt(s.budgetNanos ?? 0), NANOS)} is used up ` +
          `($${fromScaled(BigInt(s.spentNanos), NANOS)} spent in ${s.month}); rendering is blocked until ${c.reset_at}`,
      );
    },

    /** Every budgeted project (the scheduled job), then alerts still owed a delivery. */
    async evaluateAll(): Promise<void> {
      for (const projectId of await store.projectsWithBudgets()) {
        try {
          await evaluate(projectId);
        } catch (err) {
          logger.warn({ project_id: projectId, err: { message: (err as Error).message } }, 'budget evaluation failed');
        }
      }
      for (const id of await store.undelivered(config.webhookAttempts))
        await jobs.enqueue(WEBHOOK_JOB, { alertId: id }, { jobId: `alert-${id}` });
    },

    /** One delivery attempt of an alert; throws when it failed, so the runner retries with backoff. */
    async deliverAlert(alertId: string): Promise<void> {
      const a = await store.alertForDelivery(alertId);
      if (!a || a.delivered_at || !a.webhook_url || a.delivery_attempts >= config.webhookAttempts) return;
      const { body, headers } = alertDelivery(a, a.webhook_secret, new Date());
      const r = await deliver(a.webhook_url, body, headers, {
        timeoutMs: config.webhookTimeoutMs,
        allowPrivate: config.webhookAllowPrivate,
      });
      metrics.alertDeliveries.inc({ outcome: r.ok ? 'delivered' : 'failed' });
      await store.recordAttempt(alertId, a.webhook_url, r);
      if (!r.ok) throw new Error(`webhook delivery of alert ${alertId} failed: ${r.error}`);
    },
  };
}

export type Budgets = ReturnType<typeof createBudgets>;
