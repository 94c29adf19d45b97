// Scoped budgets (docs/spend.md "Scoped budgets"): each with its gauge, period, status and alert
// history (GET .../budgets/{id}); admins create them (the signed webhook's secret shown once), edit
// the amount, thresholds and channel, and delete them.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { BudgetGauge } from '../charts.tsx';
import { Link } from '../router.tsx';
import { pct, usd } from '../format.ts';
import type { Budget, BudgetScopeKind, Role, ScopedBudget, ScopedBudgetList } from '../types.ts';
import { Badge, Card, Empty, ErrorBox, Form, Load, SecretOnce, Time, useAction, useApi } from '../ui.tsx';
import { BudgetView } from './spend.tsx';

const KINDS: BudgetScopeKind[] = ['project', 'user', 'agent', 'tag', 'api_key'];

const scopeText = (b: ScopedBudget) => (b.scope.kind === 'project' ? 'the project' : `${b.scope.kind} "${b.scope.value}"`);
const PERIOD = { day: 'Daily', week: 'Weekly', month: 'Monthly' } as const;
/** The signing secret to show once: only a signed webhook that has a URL signs anything. */
const secretOf = (b: ScopedBudget) => (b.webhook_url && b.webhook_format === 'signed' ? b.webhook_secret : undefined);
const statusKind = (s: string) => (s === 'ok' ? 'ok' : s === 'alert' ? 'warn' : 'bad');

export function Budgets({ projectId, role }: { projectId: string; role: Role }) {
  const base = `/api/projects/${enc(projectId)}/budgets`;
  const list = useApi<ScopedBudgetList>(base);
  // The project's monthly budget (GET …/budget, set in Settings) is a budget of the same engine that
  // `…/budgets` does not list: shown first, so this page has every budget of the project.
  const monthly = useApi<Budget>(`/api/projects/${enc(projectId)}/budget`);
  const [secret, setSecret] = useState<string | undefined>();
  const admin = role === 'admin';
  return (
    <>
      <header class="page">
        <h1>Budgets</h1>
      </header>
      {secret && <SecretOnce label="Webhook signing secret" value={secret} />}
      <Card title="Monthly budget of the project" class="budget-card project-budget">
        <Load state={monthly} label="Loading the project's budget…">
          {(b) => <BudgetView b={b} projectId={projectId} role={role} />}
        </Load>
        {admin && (
          <p class="muted small">
            Set or change it in <Link href={`/projects/${enc(projectId)}/settings`}>Settings</Link>; scoped budgets below.
          </p>
        )}
      </Card>
      {admin && (
        <BudgetForm
          base={base}
          onCreated={(b) => {
            setSecret(secretOf(b));
            list.reload();
          }}
        />
      )}
      <Load state={list} label="Loading budgets…">
        {(data) =>
          data.items.length === 0 ? (
            <Empty title="No budget yet">
              <p>
                {admin
                  ? 'Create one above: a daily, weekly or monthly amount for the project, a user, an agent, a tag or an API key, with alert thresholds.'
                  : 'An admin of the project can create budgets here.'}
              </p>
            </Empty>
          ) : (
            <div class="budgets">
              {data.items.map((b) => (
                <BudgetCard
                  key={`${b.id} ${b.updated_at} ${b.spent_usd}`}
                  base={base}
                  budget={b}
                  admin={admin}
                  onChanged={list.reload}
                  onSecret={setSecret}
                />
              ))}
            </div>
          )
        }
      </Load>
    </>
  );
}

function BudgetCard({
  base,
  budget,
  admin,
  onChanged,
  onSecret,
}: {
  base: string;
  budget: ScopedBudget;
  admin: boolean;
  onChanged(): void;
  onSecret(s: string | undefined): void;
}) {
  const detail = useApi<ScopedBudget>(`${base}/${enc(budget.id)}`);
  const [editing, setEditing] = useState(false);
  const remove = useAction(async () => {
    if (!confirm(`Delete the ${PERIOD[budget.period].toLowerCase()} budget of ${scopeText(budget)}? Its alert history goes with it.`))
      return;
    await api(`${base}/${enc(budget.id)}`, { method: 'DELETE' });
    onChanged();
  });
  const b = detail.data ?? budget;
  return (
    <Card
      class="budget-card"
      title={
        <span data-budget-scope={`${b.scope.kind}:${b.scope.value ?? ''}`}>
          {PERIOD[b.period]} budget of {scopeText(b)}
        </span>
      }
      actions={
        admin && (
          <>
            <button type="button" onClick={() => setEditing(!editing)}>
              {editing ? 'Close' : 'Edit'}
            </button>
            <button type="button" class="danger" onClick={() => remove.run()}>
              Delete
            </button>
          </>
        )
      }
    >
      <ErrorBox error={remove.error} />
      <div class="budget-view">
        <BudgetGauge
          pctUsed={b.pct_used}
          threshold={Math.min(...b.thresholds_pct)}
          status={b.status}
          spent={b.spent_usd}
          budget={b.amount_usd}
        />
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <Badge kind={statusKind(b.status)}>{b.status}</Badge> {b.blocked && <Badge kind="bad">calls blocked</Badge>}
          </dd>
          <dt>Period</dt>
          <dd>
            {b.period} from <Time iso={b.period_start} />, resets <Time iso={b.reset_at} />
          </dd>
          <dt>Remaining</dt>
          <dd>{usd(b.remaining_usd)}</dd>
          <dt>Alerts at</dt>
          <dd>
            {b.thresholds_pct.map((t) => `${t}%`).join(', ')} ·{' '}
            {b.enforcement_mode === 'block' ? 'blocks calls when exceeded' : 'alerts only'}
          </dd>
          <dt>Channel</dt>
          <dd>{b.webhook_url ? `${b.webhook_format === 'slack' ? 'Slack' : 'signed webhook'} ${b.webhook_url}` : 'none'}</dd>
        </dl>
      </div>
      {editing && (
        <BudgetForm
          base={base}
          budget={b}
          onCreated={(updated) => {
            setEditing(false);
            onSecret(secretOf(updated));
            onChanged();
          }}
        />
      )}
      <h3>Alert history</h3>
      {!b.alerts || b.alerts.length === 0 ? (
        <p class="muted">No alert yet: one fires per period when spend crosses each threshold.</p>
      ) : (
        <table class="alerts">
          <thead>
            <tr>
              <th>At</th>
              <th>Period from</th>
              <th class="num">Threshold</th>
              <th class="num">Used</th>
              <th class="num">Spent</th>
              <th>Delivery</th>
            </tr>
          </thead>
          <tbody>
            {b.alerts.map((a) => (
              <tr data-threshold={a.threshold_pct}>
                <td>
                  <Time iso={a.created_at} />
                </td>
                <td>
                  <Time iso={a.period_start} />
                </td>
                <td class="num">{a.threshold_pct}%</td>
                <td class="num">{pct(a.pct_used)}</td>
                <td class="num">{usd(a.spent_usd)}</td>
                <td>
                  {a.delivered_at
                    ? 'delivered'
                    : a.delivery_attempts > 0
                      ? `${a.delivery_attempts} attempt(s), last: ${a.last_status ?? a.last_error ?? '—'}`
                      : b.webhook_url
                        ? 'pending'
                        : 'no channel'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}

/** Creates a budget, or (with `budget`) edits its amount, thresholds and channel. */
function BudgetForm({ base, budget, onCreated }: { base: string; budget?: ScopedBudget; onCreated(b: ScopedBudget): void }) {
  const [f, setF] = useState({
    kind: (budget?.scope.kind ?? 'user') as BudgetScopeKind,
    value: budget?.scope.value ?? '',
    period: budget?.period ?? 'month',
    amount: budget ? String(budget.amount_usd) : '',
    thresholds: (budget?.thresholds_pct ?? [80, 100]).join(', '),
    mode: budget?.enforcement_mode ?? 'alert',
    url: budget?.webhook_url ?? '',
    format: budget?.webhook_format ?? 'signed',
    rotate: false,
  });
  const set = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const save = useAction(async () => {
    const common = {
      amount_usd: Number(f.amount),
      thresholds_pct: f.thresholds
        .split(/[\s,]+/)
        .filter(Boolean)
        .map(Number),
      enforcement_mode: f.mode,
      webhook_url: f.url.trim() || null,
      webhook_format: f.format,
    };
    // A signed webhook added where there was none gets a fresh secret, shown once: the one made
    // with the budget was never shown (there was nothing to sign for).
    const rotate = f.rotate || (f.format === 'signed' && !!f.url.trim() && !budget?.webhook_url);
    const saved = budget
      ? await api<ScopedBudget>(`${base}/${enc(budget.id)}`, {
          method: 'PUT',
          body: { ...common, ...(rotate ? { rotate_webhook_secret: true } : {}) },
        })
      : await api<ScopedBudget>(base, {
          method: 'POST',
          body: { scope: f.kind === 'project' ? { kind: 'project' } : { kind: f.kind, value: f.value }, period: f.period, ...common },
        });
    onCreated(saved);
  });
  return (
    <Form class={`filters card budget-form ${budget ? 'edit' : 'create'}`} onSubmit={() => save.run()} noValidate>
      {!budget && (
        <>
          <label>
            Scope
            <select name="scope_kind" value={f.kind} onChange={set('kind')}>
              {KINDS.map((k) => (
                <option value={k}>{k}</option>
              ))}
            </select>
          </label>
          {f.kind !== 'project' && (
            <label>
              {f.kind === 'api_key' ? 'API key id' : `${f.kind[0]!.toUpperCase()}${f.kind.slice(1)} id`}
              <input name="scope_value" value={f.value} onInput={set('value')} />
            </label>
          )}
          <label>
            Period
            <select name="period" value={f.period} onChange={set('period')}>
              <option value="day">day (UTC)</option>
              <option value="week">week (from Monday, UTC)</option>
              <option value="month">month (UTC)</option>
            </select>
          </label>
        </>
      )}
      <label>
        Amount ($)
        <input name="amount_usd" type="number" step="any" min="0" value={f.amount} onInput={set('amount')} />
      </label>
      <label>
        Thresholds (%)
        <input name="thresholds_pct" value={f.thresholds} onInput={set('thresholds')} placeholder="80, 100" />
      </label>
      <label>
        When exceeded
        <select name="enforcement_mode" value={f.mode} onChange={set('mode')}>
          <option value="alert">alert only</option>
          <option value="block">block calls (budget check)</option>
        </select>
      </label>
      <label>
        Channel
        <select name="webhook_format" value={f.format} onChange={set('format')}>
          <option value="signed">signed webhook</option>
          <option value="slack">Slack incoming webhook</option>
        </select>
      </label>
      <label class="wide">
        Webhook URL
        <input name="webhook_url" type="url" value={f.url} onInput={set('url')} placeholder="https://… (empty: no channel)" />
      </label>
      {budget && f.format === 'signed' && (
        <label class="check">
          <input type="checkbox" checked={f.rotate} onChange={(e) => setF({ ...f, rotate: (e.target as HTMLInputElement).checked })} /> new
          signing secret
        </label>
      )}
      <div class="apply">
        <button type="submit" class="primary" disabled={save.busy}>
          {budget ? 'Save budget' : 'Create budget'}
        </button>
      </div>
      <ErrorBox error={save.error} />
    </Form>
  );
}
