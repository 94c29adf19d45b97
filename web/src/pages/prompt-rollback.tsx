// "Roll back to vN" (POST …/rollback; docs/prompts.md): a rollback appends a new version with vN's
// content and moves no label, so agents fetching by label get what they got before. The dialog says
// exactly that before anything happens — the number the new version will have, where each label
// points — and offers to move the anchor label (production, else the first) to the new version
// (PUT …/labels/{label}: a protected label moves only if its release gate passes; its 409 detail is
// shown). Afterwards a message says the outcome: the new version, and where the labels point.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, enc } from '../api.ts';
import type { PromptLabelGateList, PromptVersion, PromptWithLatest } from '../types.ts';
import { Badge, useApi } from '../ui.tsx';
import { anchorLabel } from './prompt-compare.tsx';

export interface RollbackOutcome {
  created: number;
  from: number;
  /** the label the user asked to move, and whether it moved (or the API's refusal) */
  moved?: { label: string; ok: true } | { label: string; ok: false; error: ApiError };
  /** where the labels point afterwards */
  labels: Record<string, number>;
}

const labelList = (labels: Record<string, number>) =>
  Object.entries(labels)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([l, v]) => `${l} → v${v}`)
    .join(', ');

export function RollbackDialog({
  base,
  p,
  version,
  onDone,
  onCancel,
}: {
  base: string;
  p: PromptWithLatest;
  version: number;
  onDone(o: RollbackOutcome): void;
  onCancel(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const label = anchorLabel(p.labels);
  const next = p.latest_version + 1;
  const [move, setMove] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const gates = useApi<PromptLabelGateList>(label ? `${base}/gates` : null);
  const gated = !!label && !!gates.data?.items.some((g) => g.label === label);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<PromptVersion>(`${base}/rollback`, {
        method: 'POST',
        body: { version, commit_message: `Roll back to v${version}` },
      });
      let moved: RollbackOutcome['moved'];
      if (move && label) {
        try {
          await api(`${base}/labels/${enc(label)}`, {
            method: 'PUT',
            body: { version: created.version, reason: `Roll back to v${version} (as v${created.version})` },
          });
          moved = { label, ok: true };
        } catch (err) {
          moved = { label, ok: false, error: err instanceof ApiError ? err : new ApiError(0, String(err)) };
        }
      }
      const after = await api<PromptWithLatest>(base);
      onDone({ created: created.version, from: version, moved, labels: after.labels });
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog ref={ref} class="rollback-dialog" aria-labelledby="rollback-title" onCancel={onCancel}>
      <h3 id="rollback-title">Roll back to v{version}?</h3>
      <p data-field="what">
        This creates <strong>v{next}</strong> with v{version}'s template and config. History is never rewritten: v{p.latest_version} stays,
        and v{next} becomes the latest.
      </p>
      <p data-field="labels">
        {label ? (
          <>
            Labels stay where they are: <strong>{labelList(p.labels)}</strong>. Agents fetching the prompt by label keep getting those
            versions until a label moves.
          </>
        ) : (
          'This prompt has no label: agents fetching it by label are not affected; those asking for the latest version get v' + next + '.'
        )}
      </p>
      {label && (
        <label class="check-line">
          <input type="checkbox" name="move-label" checked={move} onChange={(e) => setMove((e.target as HTMLInputElement).checked)} />
          also move <Badge kind="label">{label}</Badge> to v{next} (now → v{p.labels[label]})
        </label>
      )}
      {label && move && gated && (
        <p class="muted small" data-field="gated">
          {label} is protected by a release gate: it moves only if the gate passes for v{next}; if it refuses, v{next} is still created and{' '}
          {label} stays on v{p.labels[label]}.
        </p>
      )}
      {error && (
        <div class="error" role="alert">
          <strong>Rollback refused: </strong>
          <span class="detail">{error.detail}</span>
          {error.status > 0 && <span class="status"> (HTTP {error.status})</span>}
        </div>
      )}
      <div class="inline dialog-actions">
        <button type="button" class="primary confirm-rollback" disabled={busy} onClick={() => void confirm()}>
          Create v{next}
          {move && label ? ` and move ${label}` : ''}
        </button>
        <button type="button" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** What a rollback did, said after it. */
export function RollbackMessage({ o, onClose }: { o: RollbackOutcome; onClose(): void }) {
  const refused = o.moved && !o.moved.ok ? o.moved : undefined;
  return (
    <div class={`notice rollback-message${refused ? ' warn' : ''}`} role="status">
      <p>
        Created <strong>v{o.created}</strong> with v{o.from}'s content.{' '}
        {o.moved?.ok && (
          <>
            <strong>{o.moved.label}</strong> now points to v{o.created}: agents fetching it get v{o.created}.{' '}
          </>
        )}
        {Object.keys(o.labels).length > 0 ? <>Labels: {labelList(o.labels)}.</> : 'This prompt has no label.'}
      </p>
      {refused && (
        <p data-field="refused">
          {refused.label} was not moved (still → v{o.labels[refused.label]}): <span class="detail">{refused.error.detail}</span>
          {refused.error.status > 0 && <span class="status"> (HTTP {refused.error.status})</span>}
        </p>
      )}
      {!o.moved && Object.keys(o.labels).length > 0 && (
        <p class="muted small">No label moved: to serve v{o.created}, move a label in Labels below.</p>
      )}
      <button type="button" class="link small" onClick={onClose}>
        dismiss
      </button>
    </div>
  );
}
