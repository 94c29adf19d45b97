// The project's monthly budget (`GET/PUT …/budget`, `…/budget/check`, the render's enforcement):
// a view over the budget engine (budget-engine.ts), where it is the project's budget of period
// 'month' on surface 'monthly' (schema/postgres/016), one threshold plus 'exceeded' at 100 %.
// Month-to-date spend comes from the days of spend_by_dims (UTC calendar month, by execution start time), never
// from raw executions. No Koa here.
// Reads are pure: GET …/budget, the check and the render's enforcement compute what they show
// from the stores (or the published state) and never fire an alert nor enqueue a delivery. Alerts
// fire only in the evaluation job (after spend moved, after a budget change, and periodically).
import { badRequest, budgetExceeded } from '../errors.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import type { DailySpendRepository } from './daily-spend-repository.ts';
import type { AlertRow, BudgetRow, BudgetStore, EnforcementMode } from './budget-repository.ts';
import type { BudgetState, PublishedState } from './budget-state.ts';
import { statusOf, type BudgetEngine } from './budget-engine.ts';
import { nanos, percent, usd } from './money.ts';
import { dayOf, monthBounds, monthOf } from './window.ts';
import { checkWebhookUrl, newWebhookSecret, presentDelivery } from './webhooks.ts';

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

interface Deps {
  engine: BudgetEngine;
  store: BudgetStore;
  dailySpend: Pick<DailySpendRepository, 'spentBetween'>;
  clock: Clock;
}

/** The monthly budget's figures as of `now` (a budget evaluated in an earlier month is a clean new month). */
function monthlyOf(s: PublishedState, now: Date): BudgetState {
  const b = s.budgets.find((x) => x.surface === 'monthly');
  const version = { budgetVersion: s.budgetVersion, readAt: s.readAt };
  if (!b) return { month: monthOf(now), budgetNanos: null, spentNanos: '0', thresholdPct: null, mode: null, status: 'ok', ...version };
  const spent = b.periodStart === monthBounds(now).start.toISOString() ? BigInt(b.spentNanos) : 0n;
  return figures(BigInt(b.amountNanos), spent, b.thresholds, b.mode, now, version);
}

function figures(
  amount: bigint,
  spent: bigint,
  thresholds: number[],
  mode: EnforcementMode,
  now: Date,
  version: { budgetVersion?: number; readAt?: number } = {},
): BudgetState {
  return {
    month: monthOf(now),
    budgetNanos: String(amount),
    spentNanos: String(spent),
    thresholdPct: thresholds[0] ?? null,
    mode,
    status: statusOf(spent, amount, thresholds),
    ...version,
  };
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
  month: a.period_start.slice(0, 7),
  pct: Number(a.pct),
  spent_usd: usd(nanos(a.spent_usd)),
  budget_monthly_usd: usd(nanos(a.amount_usd)),
  at: a.created_at.toISOString(),
  delivery: presentDelivery(a),
});

export function createBudgets(d: Deps) {
  const { engine, store, clock } = d;

  async function monthSpend(projectId: string, now: Date): Promise<bigint> {
    const b = monthBounds(now);
    return nanos(await d.dailySpend.spentBetween(projectId, dayOf(b.start), dayOf(b.next)));
  }

  async function present(budget: BudgetRow | undefined, s: BudgetState, revealWebhook: boolean) {
    const v = view(s);
    return {
      budget_monthly_usd: v.budget === null ? null : usd(v.budget),
      alert_threshold_pct: s.thresholdPct,
      enforcement_mode: s.mode,
      // A webhook URL often is a secret itself (Slack-style tokens in the path): admins only.
      webhook_url: budget?.webhook_url ? (revealWebhook ? budget.webhook_url : `${new URL(budget.webhook_url).origin}/…`) : null,
      month: s.month,
      spent_usd: usd(v.spent),
      remaining_usd: v.remaining_usd,
      pct_used: v.pct_used,
      status: s.status,
      blocked: v.blocked,
      reset_at: monthBounds(clock.now()).next.toISOString(),
      alerts: budget ? (await store.alerts(budget.budget_id, 'newest')).map(presentAlert) : [],
    };
  }

  /** The pre-flight check: memory or Redis, never a store scan (one read of the stores when a project is cold). */
  async function check(projectId: string) {
    const now = clock.now();
    const s = monthlyOf(await engine.stateFor(projectId), now);
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
    /** The evaluation job for the project (every budget of it); the monthly budget's figures and row. */
    async evaluate(projectId: string): Promise<{ state: BudgetState; budget: BudgetRow | undefined }> {
      const r = await engine.evaluate(projectId);
      return { state: monthlyOf(r.state, clock.now()), budget: r.rows.find((b) => b.surface === 'monthly') };
    },
    evaluateAll: () => engine.evaluateAll(),

    /** The budget with this month's figures, read from the stores (no alert fired, nothing published). */
    async get(projectId: string, revealWebhook: boolean) {
      const now = clock.now();
      const [budget, spent] = await Promise.all([store.monthly(projectId), monthSpend(projectId, now)]);
      const s: BudgetState = budget
        ? figures(nanos(budget.amount_usd), spent, budget.thresholds_pct, budget.enforcement_mode, now)
        : { month: monthOf(now), budgetNanos: null, spentNanos: String(spent), thresholdPct: null, mode: null, status: 'ok' };
      return present(budget, s, revealWebhook);
    },

    async put(projectId: string, input: BudgetInput) {
      const budgetNanos = toScaled(input.budget_monthly_usd, NANOS);
      if (budgetNanos <= 0n) throw badRequest('budget_monthly_usd: must be greater than 0 (at most 9 decimal places count)');
      const webhookUrl =
        input.webhook_url === undefined || input.webhook_url === null ? input.webhook_url : checkWebhookUrl(input.webhook_url);
      const row = await store.upsertMonthly(projectId, {
        amountText: fromScaled(budgetNanos, NANOS),
        thresholdPct: input.alert_threshold_pct,
        mode: input.enforcement_mode,
        webhookUrl,
        secret: newWebhookSecret(),
        rotateSecret: input.rotate_webhook_secret === true,
      });
      // The new budget is in force for checks at once (its state published); its alerts, if any
      // are due, fire in the evaluation job.
      const s = monthlyOf(await engine.refresh(projectId), clock.now());
      engine.requestEvaluation(projectId, 0);
      const body = await present(row, s, true);
      // The signing secret is shown when it is created or rotated, never again.
      return row.inserted || input.rotate_webhook_secret ? { ...body, webhook_secret: row.webhook_secret } : body;
    },

    check,

    /** Throws 402 when the project's budget is exceeded in block mode (prompt rendering). */
    async enforce(projectId: string): Promise<void> {
      const c = await check(projectId);
      if (c.allowed) return;
      const s = monthlyOf(await engine.stateFor(projectId), clock.now());
      throw budgetExceeded(
        `Budget exceeded - the monthly budget of $${fromScaled(BigInt(s.budgetNanos ?? 0), NANOS)} is used up ` +
          `($${fromScaled(BigInt(s.spentNanos), NANOS)} spent in ${s.month}); rendering is blocked until ${c.reset_at}`,
      );
    },
  };
}

export type Budgets = ReturnType<typeof createBudgets>;
