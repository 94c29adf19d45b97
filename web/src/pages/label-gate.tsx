// Release gates of prompt labels (docs/prompts.md, "Release gates"): a protected label's gate (its
// dataset, the scores that must not regress, alpha, the cost bound, whether an approval is needed),
// the admin's form to set or change it, and the move of a protected label: the gate's check first
// (each condition passed or failed with its figures), then Move (a refusal shows the API's 409
// detail), Approve (an admin other than the version's author) or Override (an admin, with a reason).
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { figure, int, pValue, rate, usd } from '../format.ts';
import type { Dataset, DatasetList, PromptLabelGate, PromptLabelGateCheck, PromptVersion, Role } from '../types.ts';
import { Badge, ErrorBox, Form, Load, useAction, useApi } from '../ui.tsx';
import { datasetPath } from './datasets.tsx';
import { Link } from '../router.tsx';

export function GateSummary({ projectId, gate }: { projectId: string; gate: PromptLabelGate }) {
  const dataset = useApi<Dataset>(`/api/projects/${enc(projectId)}/datasets/${enc(gate.dataset_id)}`);
  return (
    <div class="gate-summary small" data-field="gate">
      <Badge kind="warn">protected</Badge> evidence from{' '}
      <Link href={`${datasetPath(projectId, gate.dataset_id)}?tab=runs`}>{dataset.data?.name ?? gate.dataset_id}</Link>
      {gate.scores.length > 0 && (
        <>
          {' '}
          · scores{' '}
          {gate.scores.map((s) => (
            <code class="inline">
              {s}
              {gate.lower_is_better.includes(s) ? ' ↓' : ' ↑'}
            </code>
          ))}
        </>
      )}{' '}
      · alpha {gate.alpha}
      {gate.max_cost_increase_pct !== null ? ` · cost per item at most +${gate.max_cost_increase_pct} %` : ' · no cost bound'}
      {gate.require_approval ? ' · approval required' : ''}
    </div>
  );
}

const list = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** An admin sets or changes the gate of a label (PUT …/labels/<label>/gate). */
export function GateForm({
  projectId,
  base,
  label,
  gate,
  onSaved,
}: {
  projectId: string;
  base: string;
  label: string;
  gate: PromptLabelGate | undefined;
  onSaved(): void;
}) {
  const datasets = useApi<DatasetList>(`/api/projects/${enc(projectId)}/datasets?limit=1000`);
  const [f, setF] = useState({
    dataset_id: gate?.dataset_id ?? '',
    scores: gate?.scores.join(', ') ?? '',
    lower: gate?.lower_is_better.join(', ') ?? '',
    alpha: String(gate?.alpha ?? 0.05),
    cost: gate?.max_cost_increase_pct === null || gate === undefined ? '' : String(gate.max_cost_increase_pct),
    approval: gate?.require_approval ?? false,
  });
  const value = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const datasetId = f.dataset_id || datasets.data?.items[0]?.dataset_id || '';
  const save = useAction(async () => {
    await api<PromptLabelGate>(`${base}/labels/${enc(label)}/gate`, {
      method: 'PUT',
      body: {
        dataset_id: datasetId,
        scores: list(f.scores),
        lower_is_better: list(f.lower),
        alpha: Number(f.alpha),
        max_cost_increase_pct: f.cost === '' ? null : Number(f.cost),
        require_approval: f.approval,
      },
    });
    onSaved();
  });
  return (
    <Form class="gate-form" onSubmit={() => save.run()} noValidate>
      <div class="form-grid">
        <label>
          Dataset (its runs are the evidence)
          <select name="gate_dataset" value={datasetId} onChange={value('dataset_id')}>
            {datasets.data?.items.map((d) => (
              <option value={d.dataset_id}>{d.name}</option>
            ))}
          </select>
        </label>
        <label class="wide">
          Scores that must not regress (comma-separated)
          <input name="gate_scores" placeholder="correct, quality" value={f.scores} onInput={value('scores')} />
        </label>
        <label>
          Lower is better for
          <input name="gate_lower" placeholder="toxicity" value={f.lower} onInput={value('lower')} />
        </label>
        <label>
          Alpha
          <input type="number" name="gate_alpha" step="any" min={0} max={0.5} value={f.alpha} onInput={value('alpha')} />
        </label>
        <label>
          Max cost increase (%)
          <input type="number" name="gate_cost" step="any" min={0} placeholder="no bound" value={f.cost} onInput={value('cost')} />
        </label>
        <label>
          <span>
            <input
              type="checkbox"
              name="gate_approval"
              checked={f.approval}
              onChange={(e) => setF({ ...f, approval: (e.target as HTMLInputElement).checked })}
            />{' '}
            approval required
          </span>
        </label>
      </div>
      <button type="submit" class="primary save-gate" disabled={save.busy || !datasetId}>
        {gate ? 'Save the gate' : 'Protect the label'}
      </button>
      <ErrorBox error={save.error ?? datasets.error} title="Gate not saved" />
    </Form>
  );
}

const STATUS_KIND: Record<PromptLabelGateCheck['conditions'][number]['status'], string> = {
  passed: 'ok',
  failed: 'bad',
  not_evaluated: 'bad',
  not_applicable: '',
};

/** A gate figure with the console's formats: p as p, rates as %, money as money, the rest as figures. */
function figureValue(key: string, v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v !== 'number') return Array.isArray(v) ? v.join(', ') : String(v);
  if (key === 'p_value') return pValue(v);
  if (key.startsWith('rate_')) return rate(v);
  if (key.endsWith('_usd')) return usd(v);
  if (key.endsWith('_pct')) return `${figure(v)} %`;
  if (key.startsWith('n_') || key.startsWith('items_')) return int(v);
  return figure(v);
}

const figureText = (figures: Record<string, unknown> | undefined): string =>
  Object.entries(figures ?? {})
    .map(([k, v]) => `${k} ${figureValue(k, v)}`)
    .join(' · ');

/** The gate's check for moving `label` to `version`, and the ways to move it. */
export function GateMove({
  base,
  label,
  version,
  role,
  userId,
  onMoved,
}: {
  base: string;
  label: string;
  version: number;
  role: Role;
  userId: string;
  onMoved(): void;
}) {
  const path = `${base}/labels/${enc(label)}`;
  const check = useApi<PromptLabelGateCheck>(`${path}/gate/check?version=${version}`);
  const author = useApi<PromptVersion>(`${base}/versions/${version}`).data?.created_by;
  const [reason, setReason] = useState('');
  const move = useAction(async (body: Record<string, unknown>) => {
    await api(path, { method: 'PUT', body: { version, ...body } });
    onMoved();
  });
  const approve = useAction(async () => {
    await api(`${path}/approvals`, { method: 'POST', body: { version } });
    check.reload();
  });
  const admin = role === 'admin';
  return (
    <div class="gate-move" data-label={label}>
      <Load state={check} label="Checking the gate…">
        {(c) => (
          <>
            <p data-field="gate_verdict">
              Moving <Badge kind="label">{label}</Badge> from {c.current_version === null ? 'no version' : `v${c.current_version}`} to v
              {c.version}: {c.passed ? <Badge kind="ok">the gate passes</Badge> : <Badge kind="bad">the gate refuses</Badge>}
            </p>
            <p class="muted small">
              Evidence: candidate run {c.evidence.candidate_run?.name ?? 'none'} · current run {c.evidence.current_run?.name ?? 'none'}
            </p>
            <table class="gate-conditions">
              <tbody>
                {c.conditions.map((k) => (
                  <tr data-condition={k.score ? `${k.condition}:${k.score}` : k.condition} data-status={k.status}>
                    <td>
                      {k.condition}
                      {k.score && <code class="inline">{k.score}</code>}
                    </td>
                    <td>
                      <Badge kind={STATUS_KIND[k.status]}>{k.status.replace('_', ' ')}</Badge>
                    </td>
                    <td>
                      {k.detail}
                      {k.figures && <div class="muted small">{figureText(k.figures)}</div>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Load>
      <div class="inline">
        <button type="button" class="primary gated-move" disabled={move.busy} onClick={() => move.run({})}>
          Move to v{version}
        </button>
        {admin && author !== undefined && author !== userId && (
          <button type="button" class="approve" disabled={approve.busy} onClick={() => approve.run()}>
            Approve v{version} for {label}
          </button>
        )}
      </div>
      <ErrorBox error={move.error} title="Move refused" />
      <ErrorBox error={approve.error} title="Not approved" />
      {admin && (
        <Form class="inline override" onSubmit={() => reason.trim() && move.run({ override: true, reason: reason.trim() })}>
          <input
            name="override_reason"
            placeholder="why the gate is overridden (required)"
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="danger override-move" disabled={move.busy || !reason.trim()}>
            Override and move
          </button>
        </Form>
      )}
    </div>
  );
}
