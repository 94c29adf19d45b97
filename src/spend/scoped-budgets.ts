// Budgets at every level (docs/spend.md, "Scoped budgets"): budgets scoped to the project, an
// agent, a user, a tag or an API key, each with its period (UTC day, ISO week, UTC month), thresholds and
// alert channel (signed webhook or Slack incoming webhook). Spend comes from the hourly rollups
// (exact through corrections); each threshold fires once per budget and period (the unique key of
// scoped_budget_alerts); `/budget/check?agent_id&user_id&tag&api_key_id` (and the caller's own
// API key) answers for every budget that applies, from the state the evaluation publishes (memory,
// and Redis with several nodes, compare-and-set: scoped-budget-state.ts).
import { badRequest, conflict, notFound, unprocessable } from '../errors.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { Logger } from '../logger.ts';
import type { RedisStore } from '../stores/redis.ts';
import { fromScaled, NANOS, toScaled } from '../pricing/decimal.ts';
import type { Config } from '../config.ts';
import { nanos, percent, percentText, usd } from './money.ts';
import type { SpendRollupRepository } from './spend-rollup-repository.ts';
import type { Period, ScopedBudgetRow, ScopedBudgetStore, ScopeKind, WebhookFormat } from './scoped-budget-store.ts';
import { checkWebhookUrl, newWebhookSecret } from './webhooks.ts';
import { createScopedBudgetStateStore, type PublishedBudget, type PublishedState } from './scoped-budget-state.ts';
import { deliverScopedAlert } from './scoped-budget-alerts.ts';
import { monthBounds } from './window.ts';

export const SCOPED_EVALUATE_JOB = 'scoped-budget-evaluate';
export const SCOPED_WEBHOOK_JOB = 'scoped-budget-webhook';
const DAY_MS = 86_400_000;
const MAX_BUDGET_NANOS = 10n ** 18n; // $1e9
/** After a period ends, its alerts are still evaluated this long (late data, a crossing evaluated after midnight). */
const LATE_MS = 48 * 3_600_000;

export interface ScopedBudgetInput {
  scope: { kind: ScopeKind; value?: string };
  period: Period;
  amount_usd: number;
  thresholds_pct?: number[];
  enforcement_mode?: 'alert' | 'block';
  webhook_url?: string | null;
  webhook_format?: WebhookFormat;
}

export interface ScopedBudgetUpdate {
  amount_usd?: number;
  thresholds_pct?: number[];
  enforcement_mode?: 'alert' | 'block';
  webhook_url?: string | null;
  webhook_format?: WebhookFormat;
  rotate_webhook_secret?: boolean;
}

export interface CheckQuery {
  agent_id?: string;
  user_id?: string;
  tag?: string[];
  /** An API key (key_id) whose budgets apply, besides the caller's own key. */
  api_key_id?: string;
}

export interface ScopedBudgetDeps {
  store: ScopedBudgetStore;
  /** Whether the project has this API key (revoked and expired keys included). */
  apiKeyExists(projectId: string, keyId: string): Promise<boolean>;
  rollups: Pick<SpendRollupRepository, 'scopeSpends'>;
  redis: RedisStore | undefined;
  jobs: Pick<JobRunner, 'enqueue'>;
  config: Config['spend'];
  now: () => Date;
  logger: Logger;
}

/** [start, next) of the period holding `d` (UTC; weeks start on Monday). */
export function periodBounds(period: Period, d: Date): { start: Date; next: Date } {
  if (period === 'month') return monthBounds(d);
  const day = Math.floor(d.getTime() / DAY_MS) * DAY_MS;
  if (period === 'day') return { start: new Date(day), next: new Date(day + DAY_MS) };
  const monday = day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
  return { start: new Date(monday), next: new Date(monday + 7 * DAY_MS) };
}

const chTime = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
const dayText = (d: Date) => d.toISOString().slice(0, 10);

function parseAmount(usdAmount: number): string {
  let amount: bigint;
  try {
    amount = toScaled(usdAmount, NANOS);
  } catch {
    throw badRequest('amount_usd: must be a number');
  }
  if (amount <= 0n || amount > MAX_BUDGET_NANOS) throw badRequest('amount_usd: must be greater than 0 and at most 1000000000');
  return fromScaled(amount, NANOS);
}

function parseThresholds(given: number[]): number[] {
  const thresholds = [...new Set(given)].sort((a, b) => a - b);
  if (thresholds.length === 0) throw badRequest('thresholds_pct: give at least one threshold');
  return thresholds;
}

function parseInput(input: ScopedBudgetInput) {
  const kind = input.scope.kind;
  const value = (input.scope.value ?? '').trim();
  if (kind === 'project' && value) throw badRequest('scope.value: a project budget has no value');
  if (kind !== 'project' && !value) throw badRequest(`scope.value: is required for ${SCOPE_NAME[kind]} budget`);
  const thresholds = parseThresholds(input.thresholds_pct ?? [80, 100]);
  const format = input.webhook_format ?? 'signed';
  const webhookUrl = input.webhook_url ? checkWebhookUrl(input.webhook_url) : null;
  if (format === 'slack' && !webhookUrl) throw badRequest('webhook_url: is required with webhook_format "slack"');
  return {
    kind,
    value,
    period: input.period,
    amountText: parseAmount(input.amount_usd),
    thresholds,
    mode: input.enforcement_mode ?? 'alert',
    webhookUrl,
    format,
  };
}

const SCOPE_NAME: Record<ScopeKind, string> = {
  project: 'a project',
  agent: 'an agent',
  user: 'a user',
  tag: 'a tag',
  api_key: 'an API key',
};

function statusOf(spent: bigint, amount: bigint, thresholds: number[]): 'ok' | 'alert' | 'exceeded' {
  if (spent >= amount) return 'exceeded';
  return thresholds.some((t) => spent * 100n >= amount * BigInt(t)) ? 'alert' : 'ok';
}

export function createScopedBudgets(deps: ScopedBudgetDeps) {
  const { store, config } = deps;
  const { published, publish } = createScopedBudgetStateStore(deps.redis, config.budgetCheckCacheMs, deps.logger);

  /** Spend of each budget over the period holding `at`, exact: one read per scope kind and period. */
  async function spentIn(
    budgets: ScopedBudgetRow[],
    at: (b: ScopedBudgetRow) => Date,
  ): Promise<Map<string, { bounds: { start: Date; next: Date }; spent: bigint }>> {
    const groups = new Map<string, ScopedBudgetRow[]>();
    for (const b of budgets) {
      const k = `${b.scope_kind}\u0000${periodBounds(b.period, at(b)).start.getTime()}\u0000${b.period}`;
      groups.set(k, [...(groups.get(k) ?? []), b]);
    }
    const out = new Map<string, { bounds: { start: Date; next: Date }; spent: bigint }>();
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

  /** Fires the thresholds a period crossed (each once: the unique key) and enqueues their delivery. */
  async function fire(b: ScopedBudgetRow, p: { start: Date }, spent: bigint): Promise<void> {
    const amount = nanos(b.amount_usd);
    for (const t of b.thresholds_pct) {
      if (spent * 100n < amount * BigInt(t)) continue;
      const alertId = await store.fire(
        b.budget_id,
        dayText(p.start),
        t,
        percentText(spent, amount),
        fromScaled(spent, NANOS),
        b.amount_usd,
      );
      if (alertId && b.webhook_url) {
        await deps.jobs
          .enqueue(SCOPED_WEBHOOK_JOB, { alertId }, { jobId: `scoped-alert-${alertId}` })
          .catch((err: Error) =>
            deps.logger.warn(
              { alert_id: alertId, err: { message: err.message } },
              'alert delivery not enqueued; the periodic evaluation will',
            ),
          );
      }
    }
  }

  async function evaluate(projectId: string): Promise<PublishedState> {
    const readAt = Date.now();
    const now = deps.now();
    const budgetVersion = await store.clock();
    const rows = await store.list(projectId);
    const current = await spentIn(rows, () => now);
    // During the first 48 hours of a period the previous one is evaluated too, for its alerts only.
    const late = rows.filter((b) => now.getTime() - periodBounds(b.period, now).start.getTime() < LATE_MS);
    const previous = await spentIn(late, (b) => new Date(periodBounds(b.period, now).start.getTime() - 1));
    const budgets: PublishedBudget[] = [];
    for (const b of rows) {
      const c = current.get(b.budget_id)!;
      await fire(b, c.bounds, c.spent);
      const p = previous.get(b.budget_id);
      if (p) await fire(b, p.bounds, p.spent);
      budgets.push({
        id: b.budget_id,
        kind: b.scope_kind,
        value: b.scope_value,
        period: b.period,
        periodStart: c.bounds.start.toISOString(),
        amountNanos: nanos(b.amount_usd).toString(),
        spentNanos: c.spent.toString(),
        thresholds: b.thresholds_pct,
        mode: b.enforcement_mode,
      });
    }
    const state: PublishedState = { budgetVersion, readAt, budgets };
    await publish(projectId, state);
    return state;
  }

  /** A budget with its current period's figures (read now, nothing fired: a pure read). */
  async function present(
    b: ScopedBudgetRow,
    admin: boolean,
    withAlerts: boolean,
    figures?: { bounds: { start: Date; next: Date }; spent: bigint },
  ) {
    const { bounds: p, spent } = figures ?? (await spentIn([b], () => deps.now())).get(b.budget_id)!;
    const amount = nanos(b.amount_usd);
    return {
      id: b.budget_id,
      scope: { kind: b.scope_kind, value: b.scope_kind === 'project' ? null : b.scope_value },
      period: b.period,
      amount_usd: usd(amount),
      thresholds_pct: b.thresholds_pct,
      enforcement_mode: b.enforcement_mode,
      webhook_url: b.webhook_url === null ? null : admin ? b.webhook_url : `${new URL(b.webhook_url).origin}/…`,
      webhook_format: b.webhook_format,
      period_start: p.start.toISOString(),
      reset_at: p.next.toISOString(),
      spent_usd: usd(spent),
      remaining_usd: usd(amount > spent ? amount - spent : 0n),
      pct_used: percent(spent, amount),
      status: statusOf(spent, amount, b.thresholds_pct),
      blocked: b.enforcement_mode === 'block' && spent >= amount,
      created_at: b.created_at.toISOString(),
      updated_at: b.updated_at.toISOString(),
      ...(withAlerts
        ? {
            alerts: (await store.alerts(b.budget_id)).map((a) => ({
              period_start: a.period_start,
              threshold_pct: a.threshold_pct,
              pct_used: Number(a.pct),
              spent_usd: usd(nanos(a.spent_usd)),
              created_at: a.created_at.toISOString(),
              delivery_attempts: a.delivery_attempts,
              last_status: a.last_status,
              last_error: a.last_error,
              delivered_at: a.delivered_at?.toISOString() ?? null,
            })),
          }
        : {}),
    };
  }

  return {
    evaluate,

    async create(projectId: string, input: ScopedBudgetInput) {
      const w = parseInput(input);
      // A key budget names a key of this project: a typo would otherwise be a budget nothing ever spends.
      if (w.kind === 'api_key' && !(await deps.apiKeyExists(projectId, w.value)))
        throw unprocessable(`scope.value: API key ${w.value} does not exist in this project`);
      const secret = newWebhookSecret();
      const row = await store.create(projectId, { ...w, secret });
      if (!row)
        throw conflict(`the project already has a ${w.period} budget for ${w.kind === 'project' ? 'the project' : `${w.kind} ${w.value}`}`);
      await evaluate(projectId);
      return { ...(await present(row, true, true)), ...(w.format === 'signed' ? { webhook_secret: secret } : {}) };
    },
    async list(projectId: string, admin: boolean) {
      const rows = await store.list(projectId);
      const figures = await spentIn(rows, () => deps.now());
      return { items: await Promise.all(rows.map((b) => present(b, admin, false, figures.get(b.budget_id)))) };
    },
    async get(projectId: string, id: string, admin: boolean) {
      const b = await store.get(projectId, id);
      if (!b) throw notFound('Budget');
      return present(b, admin, true);
    },
    /** Changes amount, thresholds, mode or channel; thresholds already fired in the current period do not fire again. */
    async update(projectId: string, id: string, input: ScopedBudgetUpdate) {
      const current = await store.get(projectId, id);
      if (!current) throw notFound('Budget');
      const webhookUrl =
        input.webhook_url === undefined ? undefined : input.webhook_url === null ? null : checkWebhookUrl(input.webhook_url);
      const format = input.webhook_format ?? current.webhook_format;
      if (format === 'slack' && (webhookUrl === undefined ? current.webhook_url : webhookUrl) === null)
        throw badRequest('webhook_url: is required with webhook_format "slack"');
      const secret = input.rotate_webhook_secret ? newWebhookSecret() : undefined;
      const row = await store.update(projectId, id, {
        ...(input.amount_usd !== undefined ? { amountText: parseAmount(input.amount_usd) } : {}),
        ...(input.thresholds_pct !== undefined ? { thresholds: parseThresholds(input.thresholds_pct) } : {}),
        ...(input.enforcement_mode !== undefined ? { mode: input.enforcement_mode } : {}),
        ...(webhookUrl !== undefined ? { webhookUrl } : {}),
        ...(input.webhook_format !== undefined ? { format: input.webhook_format } : {}),
        ...(secret ? { secret } : {}),
      });
      if (!row) throw notFound('Budget');
      await evaluate(projectId);
      return { ...(await present(row, true, true)), ...(secret ? { webhook_secret: secret } : {}) };
    },
    async remove(projectId: string, id: string): Promise<void> {
      if (!(await store.remove(projectId, id))) throw notFound('Budget');
      await evaluate(projectId);
    },

    /**
     * Every scoped budget that applies to a call for this agent, user, tags and API keys (the one
     * asked for and the caller's own, `callerKeyId`): the project's, and the matching ones.
     */
    async check(projectId: string, q: CheckQuery, callerKeyId = '') {
      const state = (await published(projectId)) ?? (await evaluate(projectId));
      const now = deps.now();
      const tags = new Set(q.tag ?? []);
      const keys = new Set([q.api_key_id, callerKeyId].filter((k): k is string => !!k));
      return state.budgets
        .filter(
          (b) =>
            b.kind === 'project' ||
            (b.kind === 'agent' && b.value === q.agent_id) ||
            (b.kind === 'user' && b.value === q.user_id) ||
            (b.kind === 'tag' && tags.has(b.value)) ||
            (b.kind === 'api_key' && keys.has(b.value)),
        )
        .map((b) => {
          const p = periodBounds(b.period, now);
          const spent = b.periodStart === p.start.toISOString() ? BigInt(b.spentNanos) : 0n; // a new period starts clean
          const amount = BigInt(b.amountNanos);
          return {
            id: b.id,
            scope: { kind: b.kind, value: b.kind === 'project' ? null : b.value },
            period: b.period,
            allowed: !(b.mode === 'block' && spent >= amount),
            status: statusOf(spent, amount, b.thresholds),
            enforcement_mode: b.mode,
            remaining_usd: usd(amount > spent ? amount - spent : 0n),
            reset_at: p.next.toISOString(),
          };
        });
    },

    processors(): JobProcessor[] {
      return [
        {
          name: SCOPED_EVALUATE_JOB,
          attempts: 3,
          backoffMs: 1_000,
          async process(data: { projectId?: string }) {
            if (data?.projectId) {
              await evaluate(data.projectId);
              return;
            }
            for (const projectId of await store.projects()) {
              try {
                await evaluate(projectId);
              } catch (err) {
                deps.logger.warn({ project_id: projectId, err: { message: (err as Error).message } }, 'scoped budget evaluation failed');
              }
            }
            for (const alertId of await store.undelivered(config.webhookAttempts))
              await deps.jobs.enqueue(SCOPED_WEBHOOK_JOB, { alertId }, { jobId: `scoped-alert-${alertId}` });
          },
        } as JobProcessor,
        {
          name: SCOPED_WEBHOOK_JOB,
          attempts: config.webhookAttempts,
          backoffMs: config.webhookBackoffMs,
          concurrency: 4,
          async process(data: { alertId: string }) {
            await deliverScopedAlert(store, config, String(data.alertId));
          },
        } as JobProcessor,
      ];
    },
    async schedule(runner: JobRunner): Promise<void> {
      await runner.every(SCOPED_EVALUATE_JOB, config.budgetEvalIntervalMs, {});
      await runner.enqueue(SCOPED_EVALUATE_JOB, {}, { jobId: 'boot' });
    },
  };
}

export type ScopedBudgets = ReturnType<typeof createScopedBudgets>;
