// An execution's scores (carried by GET .../executions/<id>), the "Add score" form (POST .../scores,
// source `annotation`) and delete (DELETE .../scores/<id>). The name's config, if any, picks the
// value input; the API checks the value against it and its 400/422 detail is shown as it comes.
import { useMemo, useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import type { HierarchySpan, Role, Score, ScoreConfig } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Time, useAction, useApi, Zone } from '../ui.tsx';
import { flatten } from './span-folding.ts';
import { Author, useKeyNames } from '../authors.tsx';

/** A score's value as it reads: a number, a boolean's true/false, a label. */
export function scoreValue(s: Pick<Score, 'value'>): string {
  return typeof s.value === 'number' ? String(Number(s.value.toPrecision(6))) : String(s.value);
}

/** The project's live score configs, for name suggestions and typed inputs. */
export function useScoreConfigs(projectId: string) {
  return useApi<{ items: ScoreConfig[] }>(`/api/projects/${enc(projectId)}/score-configs`);
}

/** Suggests the configs' names (with their type) to an input with list={id}. */
export function ScoreNames({ id, configs }: { id: string; configs: ScoreConfig[] }) {
  return (
    <datalist id={id}>
      {configs.map((c) => (
        <option value={c.name}>{c.data_type.toLowerCase()}</option>
      ))}
    </datalist>
  );
}

export function ExecutionScores({
  projectId,
  traceId,
  initial,
  role,
}: {
  projectId: string;
  traceId: string;
  initial: Score[];
  role: Role;
}) {
  const base = `/api/projects/${enc(projectId)}`;
  const [scores, setScores] = useState(initial);
  const configs = useScoreConfigs(projectId);
  const names = useKeyNames(projectId);
  // Span scores name their span: the names come from the span tree, fetched only when needed.
  const onSpans = scores.some((s) => s.span_id);
  const tree = useApi<{ spans: HierarchySpan[] }>(onSpans ? `${base}/executions/${enc(traceId)}/hierarchy` : null);
  const spanNames = useMemo(() => new Map(flatten(tree.data?.spans ?? []).map((r) => [r.span.span_id, r.span.name])), [tree.data]);
  const remove = useAction(async (s: Score) => {
    await api(`${base}/scores/${enc(s.id)}`, { method: 'DELETE' });
    setScores((all) => all.filter((x) => x.id !== s.id));
  });
  const canWrite = role !== 'viewer';
  return (
    <Card title={`Scores (${scores.length})`} class="scores">
      <ErrorBox error={remove.error} title="Score not deleted" />
      {scores.length === 0 ? (
        <p class="muted">No score yet: add a judgement below, or send scores with POST …/scores (docs/scores.md).</p>
      ) : (
        <div class="scroll">
          <table class="score-list">
            <thead>
              <tr>
                <th>Name</th>
                <th class="num">Value</th>
                <th>On</th>
                <th>Source</th>
                <th>Author</th>
                <th>Comment</th>
                <th>
                  Updated <Zone />
                </th>
                {canWrite && <th />}
              </tr>
            </thead>
            <tbody>
              {scores.map((s) => (
                <tr data-score-id={s.id} data-score-name={s.name}>
                  <td>
                    <strong>{s.name}</strong> <span class="muted small">{s.data_type.toLowerCase()}</span>
                  </td>
                  <td class="num value">{scoreValue(s)}</td>
                  <td>{s.span_id ? <span title={s.span_id}>span {spanNames.get(s.span_id) ?? s.span_id}</span> : 'execution'}</td>
                  <td>
                    <Badge kind={`source-${s.source}`}>{s.source}</Badge>
                  </td>
                  <td class="small">
                    <Author id={s.author} names={names} />
                  </td>
                  <td class="comment">{s.comment ?? <span class="muted">—</span>}</td>
                  <td class="small">
                    <Time iso={s.updated_at} bare />
                  </td>
                  {canWrite && (
                    <td>
                      <button
                        type="button"
                        class="danger"
                        disabled={remove.busy}
                        onClick={() => confirm(`Delete the score "${s.name}" (${scoreValue(s)})?`) && remove.run(s)}
                      >
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canWrite && (
        <AddScore
          path={`${base}/scores`}
          traceId={traceId}
          configs={configs.data?.items ?? []}
          onAdded={(s) => setScores((all) => [...all.filter((x) => x.id !== s.id), s])}
        />
      )}
    </Card>
  );
}

/** The value as sent: a config's type decides; without one a number stays a number, else a label. */
function valueToSend(raw: string, config: ScoreConfig | undefined): number | boolean | string {
  const t = raw.trim();
  if (config?.data_type === 'BOOLEAN') return t === 'true';
  if (config?.data_type === 'CATEGORICAL') return t;
  if (config?.data_type === 'NUMERIC') return t === '' ? Number.NaN : Number(t);
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
}

function AddScore({ path, traceId, configs, onAdded }: { path: string; traceId: string; configs: ScoreConfig[]; onAdded(s: Score): void }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [comment, setComment] = useState('');
  const config = configs.find((c) => c.name === name.trim());
  // A select shows its first choice before any is made: that is the value sent.
  const shown =
    value || (config?.data_type === 'BOOLEAN' ? 'true' : config?.data_type === 'CATEGORICAL' ? (config.categories?.[0] ?? '') : '');
  const add = useAction(async () => {
    const v = valueToSend(shown, config);
    // A number input left empty (or not a number): sent as null so the API names the field.
    const body = {
      trace_id: traceId,
      name: name.trim(),
      value: typeof v === 'number' && !Number.isFinite(v) ? null : v,
      source: 'annotation',
    };
    const stored = await api<Score>(path, { method: 'POST', body: comment.trim() ? { ...body, comment: comment.trim() } : body });
    onAdded(stored);
    setValue('');
    setComment('');
  });
  const range =
    config?.data_type === 'NUMERIC'
      ? [config.min_value !== null ? `≥ ${config.min_value}` : '', config.max_value !== null ? `≤ ${config.max_value}` : '']
          .filter(Boolean)
          .join(', ')
      : '';
  return (
    <Form class="add-score" onSubmit={() => add.run()} noValidate>
      <h4>Add score</h4>
      <div class="form-grid">
        <label>
          Name
          <input
            name="score_name"
            list="score-config-names"
            required
            placeholder="e.g. helpfulness"
            value={name}
            onInput={(e) => {
              setName((e.target as HTMLInputElement).value);
              setValue('');
              add.clear();
            }}
          />
          <ScoreNames id="score-config-names" configs={configs} />
        </label>
        <label>
          <span>
            Value{' '}
            <span class="hint">· {config ? `${config.data_type.toLowerCase()}${range ? `, ${range}` : ''}` : 'a number, or a label'}</span>
          </span>
          {config?.data_type === 'NUMERIC' && (
            <input
              name="score_value"
              type="number"
              step="any"
              min={config.min_value ?? undefined}
              max={config.max_value ?? undefined}
              value={value}
              onInput={(e) => setValue((e.target as HTMLInputElement).value)}
            />
          )}
          {config?.data_type === 'BOOLEAN' && (
            <select name="score_value" value={shown} onChange={(e) => setValue((e.target as HTMLSelectElement).value)}>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          )}
          {config?.data_type === 'CATEGORICAL' && (
            <select name="score_value" value={shown} onChange={(e) => setValue((e.target as HTMLSelectElement).value)}>
              {(config.categories ?? []).map((c) => (
                <option value={c}>{c}</option>
              ))}
            </select>
          )}
          {!config && <input name="score_value" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />}
        </label>
        <label class="wide">
          Comment (optional)
          <input name="score_comment" value={comment} onInput={(e) => setComment((e.target as HTMLInputElement).value)} />
        </label>
        <div>
          <button type="submit" class="primary" disabled={add.busy || !name.trim()}>
            Add score
          </button>
        </div>
      </div>
      {config?.description && <p class="muted small">{config.description}</p>}
      <ErrorBox error={add.error} title="Score refused" />
    </Form>
  );
}
