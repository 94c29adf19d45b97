// A prompt's labels (docs/prompts.md): each label's version, whether a release gate protects it (its
// gate, set or removed by admins: label-gate.tsx), move (an unprotected label after a confirmation,
// a protected one through its gate's check), add and remove; and the label history
// (GET …/label-events: moves, overrides, removals, approvals and gate changes, newest first).
import { useState } from 'preact/hooks';
import { api, enc, query } from '../api.ts';
import type { PromptLabelEventList, PromptLabelGate, PromptLabelGateList, PromptWithLatest, Role } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Load, TableScroll, Time, useAction, useApi } from '../ui.tsx';
import { GateForm, GateMove, GateSummary } from './label-gate.tsx';
import { Author, useKeyNames } from '../authors.tsx';

interface Props {
  base: string;
  projectId: string;
  role: Role;
  userId: string;
  onChanged(): void;
}

export function Labels({ p, ...props }: Props & { p: PromptWithLatest }) {
  const { base, role } = props;
  const canWrite = role !== 'viewer';
  const versions = Array.from({ length: p.latest_version }, (_, i) => p.latest_version - i);
  const [newLabel, setNewLabel] = useState('');
  const [newVersion, setNewVersion] = useState(p.latest_version);
  const [cursor, setCursor] = useState<string | undefined>();
  const names = useKeyNames(props.projectId);
  const events = useApi<PromptLabelEventList>(`${base}/label-events${query({ limit: 50, cursor })}`);
  // The gates of the protected labels, in one read: a label not listed is not protected.
  const gates = useApi<PromptLabelGateList>(`${base}/gates`);
  const changed = () => {
    props.onChanged();
    events.reload();
    gates.reload();
  };
  const add = useAction(async () => {
    await api(`${base}/labels/${enc(newLabel.trim())}`, { method: 'PUT', body: { version: newVersion } });
    setNewLabel('');
    changed();
  });
  const labels = Object.entries(p.labels);
  return (
    <>
      <Card title="Labels" class="labels">
        <p class="muted small">
          Agents fetch a prompt by label (e.g. production); moving a label changes what they get, at once. A protected label moves only
          through its release gate.
        </p>
        {labels.length === 0 && <p class="muted">No label yet.</p>}
        <ErrorBox error={gates.error} title="The release gates could not be read" />
        <table>
          <tbody>
            {labels.map(([label, at]) => (
              <LabelRow
                key={label}
                {...props}
                onChanged={changed}
                label={label}
                at={at}
                versions={versions}
                gate={gates.data?.items.find((g) => g.label === label)}
              />
            ))}
          </tbody>
        </table>
        {canWrite && (
          <Form class="inline" onSubmit={() => newLabel.trim() && add.run()}>
            <input
              name="new-label"
              aria-label="New label"
              placeholder="new label, e.g. staging"
              value={newLabel}
              onInput={(e) => setNewLabel((e.target as HTMLInputElement).value)}
            />
            <select
              name="new-label-version"
              aria-label="Version the new label points to"
              value={newVersion}
              onChange={(e) => setNewVersion(Number((e.target as HTMLSelectElement).value))}
            >
              {versions.map((n) => (
                <option value={n}>v{n}</option>
              ))}
            </select>
            <button type="submit">Add label</button>
          </Form>
        )}
        <ErrorBox error={add.error} title="Label not added" />
      </Card>
      <Card title="Label history" class="label-history">
        <Load state={events} label="Loading the label history…">
          {(page) => (
            <>
              {page.items.length === 0 && <p class="muted">No label change recorded yet.</p>}
              <TableScroll label="Label history">
                <table>
                  <tbody>
                    {page.items.map((e) => (
                      <tr data-event={e.action} data-event-label={e.label}>
                        <td>
                          <Time iso={e.created_at} />
                        </td>
                        <td>
                          <Badge kind="label">{e.label}</Badge>
                        </td>
                        <td>
                          <Badge kind={e.action === 'overridden' ? 'bad' : e.action === 'approved' ? 'ok' : ''}>
                            {e.action.replace('_', ' ')}
                          </Badge>
                        </td>
                        <td>
                          {e.from_version === null ? '—' : `v${e.from_version}`} → {e.to_version === null ? '—' : `v${e.to_version}`}
                        </td>
                        <td class="small">
                          <Author id={e.actor} names={names} />
                        </td>
                        <td data-field="reason">{e.reason ?? <span class="muted">—</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              <div class="pager">
                {cursor && (
                  <button type="button" onClick={() => setCursor(undefined)}>
                    ← Newest
                  </button>
                )}
                {page.next_cursor && (
                  <button type="button" onClick={() => setCursor(page.next_cursor ?? undefined)}>
                    Older →
                  </button>
                )}
              </div>
            </>
          )}
        </Load>
      </Card>
    </>
  );
}

type Panel = 'none' | 'gate' | 'move';

function LabelRow({
  base,
  projectId,
  role,
  userId,
  onChanged,
  label,
  at,
  versions,
  gate,
}: Props & { label: string; at: number; versions: number[]; gate: PromptLabelGate | undefined }) {
  const path = `${base}/labels/${enc(label)}`;
  const [target, setTarget] = useState(at);
  const [panel, setPanel] = useState<Panel>('none');
  const canWrite = role !== 'viewer';
  const done = () => {
    setPanel('none');
    onChanged();
  };
  const move = useAction(async () => {
    await api(path, { method: 'PUT', body: { version: target } });
    onChanged();
  });
  const remove = useAction(async () => {
    await api(path, { method: 'DELETE' });
    onChanged();
  });
  const removeGate = useAction(async () => {
    await api(`${path}/gate`, { method: 'DELETE' });
    done();
  });
  const onMove = () => {
    if (gate) setPanel('move');
    else if (confirm(`Move "${label}" from v${at} to v${target}? Agents fetching it get that version at once.`)) void move.run();
  };
  return (
    <>
      <tr data-label={label} data-protected={gate ? 'true' : 'false'}>
        <td>
          <Badge kind="label">{label}</Badge>
        </td>
        <td>
          → v{at}
          {gate && <GateSummary projectId={projectId} gate={gate} />}
          <ErrorBox error={move.error ?? remove.error ?? removeGate.error} title="Label not changed" />
        </td>
        {canWrite && (
          <td class="actions">
            <select
              name={`label-${label}`}
              aria-label={`Version to move "${label}" to`}
              value={target}
              onChange={(e) => setTarget(Number((e.target as HTMLSelectElement).value))}
            >
              {versions.map((n) => (
                <option value={n}>v{n}</option>
              ))}
            </select>
            <button type="button" disabled={move.busy || target === at} onClick={onMove}>
              {gate ? 'Check and move' : 'Move'}
            </button>
            <button
              type="button"
              class="danger"
              disabled={remove.busy}
              onClick={() => confirm(`Remove the label "${label}"?`) && remove.run()}
            >
              Remove
            </button>
            {role === 'admin' && (
              <button type="button" class="edit-gate" onClick={() => setPanel(panel === 'gate' ? 'none' : 'gate')}>
                {gate ? 'Edit gate' : 'Protect'}
              </button>
            )}
            {role === 'admin' && gate && (
              <button
                type="button"
                class="danger remove-gate"
                disabled={removeGate.busy}
                onClick={() => confirm(`Remove the release gate of "${label}"? It then moves without a check.`) && removeGate.run()}
              >
                Remove gate
              </button>
            )}
          </td>
        )}
      </tr>
      {panel !== 'none' && (
        <tr class="label-panel">
          <td colSpan={3}>
            {panel === 'gate' && <GateForm projectId={projectId} base={base} label={label} gate={gate} onSaved={done} />}
            {panel === 'move' && (
              <GateMove key={target} base={base} label={label} version={target} role={role} userId={userId} onMoved={done} />
            )}
            <button type="button" class="link" onClick={() => setPanel('none')}>
              close
            </button>
          </td>
        </tr>
      )}
    </>
  );
}
