// The executions list's exclusions and score columns, both kept in the page's query string:
// `exclude_<field>=<value>` (repeatable, the API's own parameters: executions whose field is none
// of them), and `columns=score:<name>,…` (the score columns shown, asked of the API as `scores`).
import { useState } from 'preact/hooks';
import { navigate, useLocation, withParams } from '../router.tsx';
import { ScoreNames, useScoreConfigs } from './scores.tsx';

const EXCLUDABLE: Array<[string, string]> = [
  ['agent_id', 'agent'],
  ['model', 'model'],
  ['provider', 'provider'],
  ['tag', 'tag'],
  ['user_id', 'user'],
  ['source', 'source'],
  ['environment', 'environment'],
  ['session_id', 'session'],
  ['api_key_id', 'API key'],
];

export const isExclusion = (key: string): boolean => EXCLUDABLE.some(([f]) => key === `exclude_${f}`);
const labelOf = (key: string) => EXCLUDABLE.find(([f]) => key === `exclude_${f}`)?.[1] ?? key;

/** A field and a value to leave out; "Exclude" adds it. */
export function ExclusionPicker({ onExclude }: { onExclude(param: string, value: string): void }) {
  const [field, setField] = useState('agent_id');
  const [value, setValue] = useState('');
  const add = () => {
    if (value.trim()) onExclude(`exclude_${field}`, value.trim());
    setValue('');
  };
  return (
    <div class="exclude">
      <label>
        Exclude
        <select name="exclude_field" value={field} onChange={(e) => setField((e.target as HTMLSelectElement).value)}>
          {EXCLUDABLE.map(([f, label]) => (
            <option value={f}>{label}</option>
          ))}
        </select>
      </label>
      <input
        name="exclude_value"
        aria-label="Value to exclude"
        placeholder="value"
        value={value}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            add();
          }
        }}
      />
      <button type="button" name="exclude_add" onClick={add}>
        Exclude
      </button>
    </div>
  );
}

/** The exclusions applied, as chips; × removes one. */
export function ExclusionChips({
  exclusions,
  onChange,
}: {
  exclusions: Array<[string, string]>;
  onChange(rest: Array<[string, string]>): void;
}) {
  if (exclusions.length === 0) return null;
  return (
    <div class="score-chips exclusion-chips">
      {exclusions.map(([k, v], i) => (
        <span class="chip exclusion" data-exclude={`${k}=${v}`}>
          not {labelOf(k)} {v}
          <button
            type="button"
            class="link"
            aria-label={`Stop excluding ${labelOf(k)} ${v}`}
            onClick={() => onChange(exclusions.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </span>
      ))}
    </div>
  );
}

/** The score names of `columns=score:a,score:b`. */
export function scoreColumnsOf(columns: string | null): string[] {
  return [
    ...new Set(
      (columns ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter((c) => c.startsWith('score:') && c.length > 'score:'.length)
        .map((c) => c.slice('score:'.length)),
    ),
  ];
}

/** Choosing the score columns: a name to add, the chosen ones as chips (× removes one). */
export function ScoreColumns({ projectId }: { projectId: string }) {
  const loc = useLocation();
  const chosen = scoreColumnsOf(loc.params.get('columns'));
  const configs = useScoreConfigs(projectId).data?.items ?? [];
  const [name, setName] = useState('');
  const save = (names: string[]) =>
    navigate(withParams(loc, { columns: names.length ? names.map((n) => `score:${n}`).join(',') : null }), { replace: true });
  const add = () => {
    const n = name.trim();
    if (n && !chosen.includes(n)) save([...chosen, n]);
    setName('');
  };
  return (
    <div class="score-columns">
      <span class="muted">Score columns</span>
      {chosen.map((n) => (
        <span class="chip" data-column={n}>
          {n}
          <button type="button" class="link" aria-label={`Remove the column ${n}`} onClick={() => save(chosen.filter((c) => c !== n))}>
            ×
          </button>
        </span>
      ))}
      <input
        name="score_column"
        list="score-column-names"
        placeholder="score name"
        aria-label="Score column to add"
        value={name}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            add();
          }
        }}
      />
      <ScoreNames id="score-column-names" configs={configs} />
      <button type="button" name="score_column_add" onClick={add}>
        Add column
      </button>
    </div>
  );
}
