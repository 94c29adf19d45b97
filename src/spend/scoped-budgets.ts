// Budgets at every level (docs/spend.md, "Scoped budgets"): budgets scoped to the project, an
// agent, a user, a tag or an API key, each with its period (UTC day, ISO week, UTC month), thresholds and
// alert channel (signed webhook or Slack incoming webhook): `…/budgets` and the scoped part of
// `…/budget/check`, views over the budget engine (budget-engine.ts: evaluation, the alert ledger,
// the published state, deliveries). Spend comes from the hourly rollups (exact through
// corrections); each threshold fires once per budget and period; `/budget/check?agent_id&user_id&tag&api_key_id`
// (and the caller's own API key) answers for every budget that applies, from the published state.
import { badRequest, conflict, notFound, unprocessable } from '../errors.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import { nanos, percent, usd } from './money.ts';
import type { BudgetRow, BudgetStore, ScopeKind, WebhookFormat, Period } from './budget-repository.ts';
import type { PublishedState } from './budget-state.ts';
import { checkWebhookUrl, newWebhookSecret } from './webhooks.ts';
import { periodBounds, statusOf, type BudgetEngine, type PeriodSpend } from './budget-engine.ts';

const MAX_BUDGET_NANOS = 10n ** 18n; // $1e9

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
  engine: BudgetEngine;
  store: BudgetStore;
  /** Whether the project has this API key (revoked and expired keys included). */
  apiKeyExists(projectId: string, keyId: string): Promise<boolean>;
  now: () => Date;
}

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

export function createScopedBudgets(deps: ScopedBudgetDeps) {
  const { store, engine } = deps;
  const evaluate = async (projectId: string): Promise<PublishedState> => (await engine.evaluate(projectId)).state;

  /** A budget with its current period's figures (read now, nothing fired: a pure read). */
  async function present(b: BudgetRow, admin: boolean, withAlerts: boolean, figures?: PeriodSpend) {
    const { bounds: p, spent } = figures ?? (await engine.spentIn([b], () => deps.now())).get(b.budget_id)!;
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
            alerts: (await store.alerts(b.budget_id, 'byPeriod')).map((a) => ({
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
      const rows = await store.list(projectId, 'scoped');
      const figures = await engine.spentIn(rows, () => deps.now());
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
      const state = await engine.stateFor(projectId);
      const now = deps.now();
      const tags = new Set(q.tag ?? []);
      const keys = new Set([q.api_key_id, callerKeyId].filter((k): k is string => !!k));
      return state.budgets
        .filter(
          (b) =>
            (b.surface ?? 'scoped') === 'scoped' &&
            (b.kind === 'project' ||
              (b.kind === 'agent' && b.value === q.agent_id) ||
              (b.kind === 'user' && b.value === q.user_id) ||
              (b.kind === 'tag' && tags.has(b.value)) ||
              (b.kind === 'api_key' && keys.has(b.value))),
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
  };
}

export type ScopedBudgets = ReturnType<typeof createScopedBudgets>;
