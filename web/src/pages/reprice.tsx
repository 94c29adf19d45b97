// Repricing after a price change (docs/spend.md "Repricing"): a dry run shows what would change,
// then Apply starts the job, whose progress is polled (GET .../reprice/{id}) until it ends.
import { useEffect, useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import { fromLocalInput, int, toLocalInput, usdText } from '../format.ts';
import type { RepriceDryRun, RepriceJob } from '../types.ts';
import { Badge, Card, ErrorBox, Form, useAction, Zone } from '../ui.tsx';

export function Reprice({ p }: { p: string }) {
  // from / to are ISO instants; their fields show them on the console's clock (format.ts).
  const minute = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString().replace('.000Z', 'Z');
  const [f, setF] = useState({ provider: '', model: '', from: minute(Date.now() - 30 * 86_400_000), to: minute(Date.now() + 120_000) });
  const [dry, setDry] = useState<RepriceDryRun | undefined>();
  const [job, setJob] = useState<RepriceJob | undefined>();
  const body = () => ({
    from: f.from,
    to: f.to,
    ...(f.provider.trim() ? { provider: f.provider.trim() } : {}),
    ...(f.model.trim() ? { model: f.model.trim() } : {}),
  });
  const preview = useAction(async () => {
    setJob(undefined);
    setDry(await api<RepriceDryRun>(`${p}/reprice`, { method: 'POST', body: { ...body(), dry_run: true } }));
  });
  const apply = useAction(async () => {
    if (!confirm(`Reprice ${dry?.executions_changed ?? 0} executions? Spend moves by ${dry?.spend_delta_usd ?? 0} USD.`)) return;
    setJob(await api<RepriceJob>(`${p}/reprice`, { method: 'POST', body: body() }));
  });
  useEffect(() => {
    if (!job || job.status === 'done' || job.status === 'failed') return;
    const t = setTimeout(() => void api<RepriceJob>(`${p}/reprice/${enc(job.id)}`).then(setJob, () => undefined), 500);
    return () => clearTimeout(t);
  }, [job]);
  const field = (k: keyof typeof f) => (e: Event) => {
    setF({ ...f, [k]: (e.target as HTMLInputElement).value });
    setDry(undefined);
  };
  const progress = job && job.executions_total > 0 ? job.executions_scanned / job.executions_total : job?.status === 'done' ? 1 : 0;
  return (
    <Card title="Reprice stored executions" class="reprice">
      <p class="muted small">
        After adding or correcting a price, executions already stored keep their cost until repriced. A dry run shows the change; Apply
        writes it as corrections (every rollup, budget and export moves by the dry run's delta).
      </p>
      <Form class="inline-form" onSubmit={() => preview.run()}>
        <label>
          Provider
          <input name="reprice_provider" value={f.provider} onInput={field('provider')} placeholder="any" />
        </label>
        <label>
          Model
          <input name="reprice_model" value={f.model} onInput={field('model')} placeholder="any" />
        </label>
        <label>
          <span>
            From <Zone />
          </span>
          <input
            name="reprice_from"
            type="datetime-local"
            value={toLocalInput(f.from)}
            onInput={(e) => setF({ ...f, from: fromLocalInput((e.target as HTMLInputElement).value) })}
          />
        </label>
        <label>
          <span>
            To <Zone />
          </span>
          <input
            name="reprice_to"
            type="datetime-local"
            value={toLocalInput(f.to)}
            onInput={(e) => setF({ ...f, to: fromLocalInput((e.target as HTMLInputElement).value) })}
          />
        </label>
        <button type="submit" disabled={preview.busy}>
          Dry run
        </button>
      </Form>
      <ErrorBox error={preview.error ?? apply.error} />
      {dry && (
        <div class="dry-run">
          <p>
            <strong data-field="executions_changed">{int(dry.executions_changed)}</strong> of {int(dry.executions_scanned)} executions
            change: spend {usdText(dry.spend_before_usd)} → {usdText(dry.spend_after_usd)} (
            <span data-field="spend_delta_usd">{usdText(dry.spend_delta_usd)}</span>).
          </p>
          <button
            type="button"
            class="primary"
            disabled={apply.busy || dry.executions_changed === 0 || (job && job.status !== 'failed')}
            onClick={() => apply.run()}
          >
            Apply
          </button>
        </div>
      )}
      {job && (
        <div class="job" data-status={job.status}>
          <progress max={1} value={progress} />{' '}
          <Badge kind={job.status === 'failed' ? 'bad' : job.status === 'done' ? 'ok' : 'warn'}>{job.status}</Badge>{' '}
          {int(job.executions_scanned)} / {int(job.executions_total)} scanned, {int(job.executions_changed)} changed, delta{' '}
          {usdText(job.spend_delta_usd)}
          {job.error && <span class="error"> {job.error}</span>}
        </div>
      )}
    </Card>
  );
}
