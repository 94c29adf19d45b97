// Settings (admins): API keys, score configs, model connections, project prices, the budget and its
// webhook, retention. Each section has an id (#score-configs, …) other pages link to.
import { useEffect, useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { usd } from '../format.ts';
import type { Budget, MeContext, Retention, Role } from '../types.ts';
import { Card, Empty, ErrorBox, Form, Load, SecretOnce, Time, useAction, useApi } from '../ui.tsx';
import { ApiKeys } from './settings-keys.tsx';
import { Prices } from './settings-prices.tsx';
import { Reprice } from './reprice.tsx';
import { ScoreConfigs } from './settings-score-configs.tsx';
import { ModelConnections } from './settings-connections.tsx';

export function Settings({ projectId, role, me }: { projectId: string; role: Role; me: MeContext }) {
  if (role !== 'admin') {
    return (
      <Empty title="Settings are for the project's admins">
        <p>
          Your role in {projectId} is {role}. An admin manages keys, score configs, model connections, prices, the budget and retention.
        </p>
      </Empty>
    );
  }
  const p = `/api/projects/${enc(projectId)}`;
  return <AdminSettings p={p} me={me} />;
}

function AdminSettings({ p, me }: { p: string; me: MeContext }) {
  // A link to a section (…/settings#model-connections from an empty state) opens at it.
  useEffect(() => {
    if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
  }, []);
  return (
    <>
      <header class="page">
        <h1>Settings</h1>
      </header>
      <div id="budget">
        <BudgetSettings p={p} />
      </div>
      <div id="api-keys">
        <ApiKeys p={p} me={me} />
      </div>
      <div id="score-configs">
        <ScoreConfigs p={p} />
      </div>
      <div id="model-connections">
        <ModelConnections p={p} />
      </div>
      <div id="prices">
        <Prices p={p} />
      </div>
      <Reprice p={p} />
      <RetentionSettings p={p} />
    </>
  );
}

function BudgetSettings({ p }: { p: string }) {
  const budget = useApi<Budget>(`${p}/budget`);
  const [form, setForm] = useState({ amount: '', threshold: '80', mode: 'alert', webhook: '', rotate: false });
  const [saved, setSaved] = useState<Budget | undefined>();
  const [initialised, setInitialised] = useState(false);
  useEffect(() => {
    const b = budget.data;
    if (!b || initialised) return; // filled once from the stored budget; never over what is being typed
    setInitialised(true);
    setForm({
      amount: b.budget_monthly_usd === null ? '' : String(b.budget_monthly_usd),
      threshold: String(b.alert_threshold_pct ?? 80),
      mode: b.enforcement_mode ?? 'alert',
      webhook: b.webhook_url ?? '',
      rotate: false,
    });
  }, [budget.data]);
  const save = useAction(async () => {
    const body = {
      budget_monthly_usd: Number(form.amount),
      alert_threshold_pct: Number(form.threshold),
      enforcement_mode: form.mode,
      webhook_url: form.webhook.trim() || null,
      // A webhook added where there was none gets a fresh secret, so it is shown (the one made with
      // the budget was never shown: there was nothing to sign for).
      ...(form.rotate || (form.webhook.trim() && !budget.data?.webhook_url) ? { rotate_webhook_secret: true } : {}),
    };
    const b = await api<Budget>(`${p}/budget`, { method: 'PUT', body });
    setSaved(b);
    setForm({ ...form, rotate: false });
    budget.reload();
  });
  const field = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return (
    <Card title="Monthly budget and alert webhook">
      <Load state={budget}>
        {(b) => (
          <p class="muted">
            {b.month}: {usd(b.spent_usd)} spent
            {b.budget_monthly_usd !== null ? ` of ${usd(b.budget_monthly_usd)} (${b.status})` : ', no budget set'}.
          </p>
        )}
      </Load>
      <Form class="form-grid" onSubmit={() => save.run()}>
        <label>
          Budget per month (USD)
          <input name="budget_monthly_usd" type="number" min="0" step="any" required value={form.amount} onInput={field('amount')} />
        </label>
        <label>
          Alert threshold (%)
          <input
            name="alert_threshold_pct"
            type="number"
            min="1"
            max="100"
            step="1"
            required
            value={form.threshold}
            onInput={field('threshold')}
          />
        </label>
        <label>
          When exceeded
          <select name="enforcement_mode" value={form.mode} onChange={field('mode')}>
            <option value="alert">alert only</option>
            <option value="block">block calls (budget check answers allowed: false)</option>
          </select>
        </label>
        <label class="wide">
          Webhook URL (optional; signed with HMAC-SHA256)
          <input
            name="webhook_url"
            type="url"
            placeholder="https://hooks.example.com/traceloom"
            value={form.webhook}
            onInput={field('webhook')}
          />
        </label>
        <label class="toggle">
          <input
            type="checkbox"
            checked={form.rotate}
            onChange={(e) => setForm({ ...form, rotate: (e.target as HTMLInputElement).checked })}
          />
          Rotate the webhook signing secret
        </label>
        <div>
          <button type="submit" class="primary" disabled={save.busy}>
            Save budget
          </button>
        </div>
      </Form>
      <ErrorBox error={save.error} title="Budget not saved" />
      {saved && !save.error && (
        <p class="saved">
          Saved: {usd(saved.budget_monthly_usd)} a month, alert at {saved.alert_threshold_pct}%.
        </p>
      )}
      {saved?.webhook_secret && saved.webhook_url && <SecretOnce label="Webhook signing secret" value={saved.webhook_secret} />}
    </Card>
  );
}

function RetentionSettings({ p }: { p: string }) {
  const retention = useApi<Retention>(`${p}/retention`);
  const [days, setDays] = useState<string | undefined>();
  useEffect(() => {
    if (retention.data && days === undefined) setDays(retention.data.days === null ? '' : String(retention.data.days));
  }, [retention.data]);
  const save = useAction(async () => {
    await api<Retention>(`${p}/retention`, { method: 'PUT', body: { days: !days?.trim() ? null : Number(days) } });
    retention.reload();
  });
  return (
    <Card title="Retention">
      <Load state={retention}>
        {(r) => (
          <p class="muted">
            {r.days === null ? 'Raw data is kept forever.' : `Raw data older than ${r.days} days is deleted.`} Applies to:{' '}
            {r.applies_to.join(', ')}. Daily spend stays.
            {r.updated_at && (
              <>
                {' '}
                Changed <Time iso={r.updated_at} />.
              </>
            )}
          </p>
        )}
      </Load>
      <Form class="inline" onSubmit={() => save.run()}>
        <label>
          Keep raw data for (days, empty: forever){' '}
          <input
            name="retention_days"
            type="number"
            min="1"
            max="3650"
            value={days ?? ''}
            onInput={(e) => setDays((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" disabled={save.busy}>
          Save retention
        </button>
      </Form>
      <ErrorBox error={save.error} title="Retention not saved" />
    </Card>
  );
}
