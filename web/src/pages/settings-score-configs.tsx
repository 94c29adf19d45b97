// Score configs (docs/scores.md): what scores of a name may hold — a number in a range, true/false
// or one of some categories. Admins add one, change its description, archive and restore it; its
// rule (name, type, range, categories) never changes under existing scores (the API says 409), so
// the list offers no edit of it: archive it and add another.
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import type { ScoreConfig, ScoreDataType } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Load, Time, useAction, useApi } from '../ui.tsx';

const TYPES: Array<[ScoreDataType, string]> = [
  ['NUMERIC', 'numeric (a number, optionally in a range)'],
  ['BOOLEAN', 'boolean (true / false)'],
  ['CATEGORICAL', 'categorical (one of some labels)'],
];

const ruleOf = (c: ScoreConfig) =>
  c.data_type === 'NUMERIC'
    ? c.min_value === null && c.max_value === null
      ? 'any number'
      : `${c.min_value ?? '−∞'} … ${c.max_value ?? '∞'}`
    : c.data_type === 'CATEGORICAL'
      ? (c.categories ?? []).join(', ')
      : 'true / false';

export function ScoreConfigs({ p }: { p: string }) {
  const [archived, setArchived] = useState(false);
  const list = useApi<{ items: ScoreConfig[] }>(`${p}/score-configs${archived ? '?include_archived=true' : ''}`);
  const [f, setF] = useState({ name: '', type: 'NUMERIC' as ScoreDataType, min: '', max: '', categories: '', description: '' });
  const set = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const create = useAction(async () => {
    const body = {
      name: f.name.trim(),
      data_type: f.type,
      ...(f.type === 'NUMERIC' && f.min.trim() ? { min_value: Number(f.min) } : {}),
      ...(f.type === 'NUMERIC' && f.max.trim() ? { max_value: Number(f.max) } : {}),
      ...(f.type === 'CATEGORICAL'
        ? {
            categories: f.categories
              .split(',')
              .map((c) => c.trim())
              .filter(Boolean),
          }
        : {}),
      ...(f.description.trim() ? { description: f.description.trim() } : {}),
    };
    await api<ScoreConfig>(`${p}/score-configs`, { method: 'POST', body });
    setF({ ...f, name: '', min: '', max: '', categories: '', description: '' });
    list.reload();
  });
  const update = useAction(async (c: ScoreConfig, body: { archived?: boolean; description?: string | null }) => {
    await api<ScoreConfig>(`${p}/score-configs/${enc(c.config_id)}`, { method: 'PUT', body });
    list.reload();
  });
  return (
    <Card title="Score configs" class="score-configs">
      <p class="muted small">
        A score's name, with the values it may hold: annotations, API scores and evaluators (whose judge answers are held to it) use it.
      </p>
      <Form class="form-grid" onSubmit={() => create.run()} noValidate>
        <label>
          Name
          <input name="score_config_name" placeholder="helpfulness" maxLength={200} value={f.name} onInput={set('name')} />
        </label>
        <label>
          Type
          <select name="score_config_type" value={f.type} onChange={set('type')}>
            {TYPES.map(([t, text]) => (
              <option value={t}>{text}</option>
            ))}
          </select>
        </label>
        {f.type === 'NUMERIC' && (
          <>
            <label>
              Minimum (optional)
              <input name="score_config_min" type="number" step="any" value={f.min} onInput={set('min')} />
            </label>
            <label>
              Maximum (optional)
              <input name="score_config_max" type="number" step="any" value={f.max} onInput={set('max')} />
            </label>
          </>
        )}
        {f.type === 'CATEGORICAL' && (
          <label class="wide">
            Categories (comma-separated)
            <input name="score_config_categories" placeholder="good, neutral, bad" value={f.categories} onInput={set('categories')} />
          </label>
        )}
        <label class="wide">
          Description (optional)
          <input name="score_config_description" maxLength={2000} value={f.description} onInput={set('description')} />
        </label>
        <div>
          <button type="submit" class="primary" disabled={create.busy}>
            Add score config
          </button>
        </div>
      </Form>
      <ErrorBox error={create.error} title="Score config not added" />
      <ErrorBox error={update.error} title="Score config not changed" />
      <label class="toggle">
        <input
          type="checkbox"
          name="include_archived"
          checked={archived}
          onChange={(e) => setArchived((e.target as HTMLInputElement).checked)}
        />{' '}
        Show archived configs
      </label>
      <Load state={list} label="Loading score configs…">
        {(data) =>
          data.items.length === 0 ? (
            <p class="muted">No score config yet.</p>
          ) : (
            <div class="scroll">
              <table class="score-configs-list">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Type</th>
                    <th>Values</th>
                    <th>Description</th>
                    <th>Created</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((c) => (
                    <tr data-score-config={c.name}>
                      <td>
                        <strong>{c.name}</strong> {c.archived && <Badge kind="warn">archived</Badge>}
                      </td>
                      <td>{c.data_type.toLowerCase()}</td>
                      <td>{ruleOf(c)}</td>
                      <td>{c.description ?? <span class="muted">—</span>}</td>
                      <td>
                        <Time iso={c.created_at} />
                      </td>
                      <td class="actions">
                        <button
                          type="button"
                          disabled={update.busy}
                          onClick={() => {
                            const d = window.prompt(`Description of "${c.name}" (empty: none)`, c.description ?? '');
                            if (d !== null) void update.run(c, { description: d.trim() || null });
                          }}
                        >
                          Edit description
                        </button>
                        <button type="button" disabled={update.busy} onClick={() => update.run(c, { archived: !c.archived })}>
                          {c.archived ? 'Restore' : 'Archive'}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Load>
    </Card>
  );
}
