// The executions list's filter bar (executions.tsx): the API's own filters, the primary ones at
// once and the others behind "More filters", the time windows, metadata pairs, score filters and
// exclusions; applying it writes them all to the page's query string.
import { useEffect, useState } from 'preact/hooks';
import { fromLocalInput, toLocalInput } from '../format.ts';
import { ApplyReset, Form, Zone } from '../ui.tsx';
import { emptyDraft, isScoreFilter, ScoreFilters, withDraft } from './score-filter.tsx';
import { ExclusionChips, ExclusionPicker, isExclusion } from './executions-controls.tsx';

export const isMetadata = (k: string) => k.startsWith('metadata.');

export const FILTERS = [
  'provider',
  'model',
  'agent_id',
  'status',
  'min_cost',
  'max_cost',
  'start',
  'end',
  'has_templates',
  'prompt_id',
  'prompt_version',
  'prompt_label',
  'user_id',
  'session_id',
  'tag',
  'api_key_id',
  'source',
  'environment',
] as const;
/** Shown at once; the others sit behind "More filters". */
const PRIMARY: Filter[] = ['agent_id', 'model', 'status', 'user_id', 'tag'];
type Filter = (typeof FILTERS)[number];

const WINDOWS: Array<[string, number]> = [
  ['1 h', 3_600_000],
  ['24 h', 86_400_000],
  ['7 d', 7 * 86_400_000],
  ['30 d', 30 * 86_400_000],
];

const LABELS: Record<Filter, string> = {
  provider: 'Provider',
  model: 'Model',
  agent_id: 'Agent',
  status: 'Status',
  min_cost: 'Cost from ($)',
  max_cost: 'to ($)',
  start: 'From',
  end: 'To',
  has_templates: 'Templates',
  prompt_id: 'Prompt',
  prompt_version: 'Prompt version',
  prompt_label: 'Prompt label',
  user_id: 'User',
  session_id: 'Session',
  tag: 'Tag',
  api_key_id: 'API key id',
  source: 'Source',
  environment: 'Environment',
};
const PLACEHOLDERS: Partial<Record<Filter, string>> = {
  provider: 'openai, anthropic',
  model: 'gpt-4o',
  source: 'api, otlp, experiment',
  prompt_version: 'needs a prompt',
  prompt_label: 'production',
};

export function FilterBar({
  projectId,
  filters,
  onApply,
}: {
  projectId: string;
  filters: URLSearchParams;
  onApply(f: URLSearchParams): void;
}) {
  const initial = () => Object.fromEntries(FILTERS.map((k) => [k, filters.get(k) ?? ''])) as Record<Filter, string>;
  const initialScores = () => [...filters].filter(([k]) => isScoreFilter(k));
  const initialMetadata = () =>
    [...filters]
      .filter(([k]) => isMetadata(k))
      .map(([k, v]) => `${k.slice('metadata.'.length)}=${v}`)
      .join(' ');
  const exclusions = [...filters].filter(([k]) => isExclusion(k));
  const [metadata, setMetadata] = useState(initialMetadata);
  const [f, setF] = useState(initial);
  const [scores, setScores] = useState(initialScores);
  const [draft, setDraft] = useState(emptyDraft);
  useEffect(() => {
    setF(initial());
    setScores(initialScores());
    setMetadata(initialMetadata());
    setDraft(emptyDraft);
  }, [filters.toString()]);
  const set = (k: Filter) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const apply = (over: Partial<Record<Filter, string>> = {}, scoreParams = withDraft(scores, draft), excluded = exclusions) => {
    const q = new URLSearchParams(Object.entries({ ...f, ...over }).filter(([, v]) => v !== ''));
    for (const pair of metadata.split(/\s+/).filter(Boolean)) {
      const at = pair.indexOf('=');
      if (at > 0) q.set(`metadata.${pair.slice(0, at)}`, pair.slice(at + 1));
    }
    for (const [k, v] of scoreParams) q.append(k, v);
    for (const [k, v] of excluded) q.append(k, v);
    onApply(q);
  };
  const field = (k: Filter) => {
    if (k === 'status' || k === 'has_templates') {
      const options =
        k === 'status'
          ? [
              ['ok', 'ok'],
              ['error', 'error'],
            ]
          : [
              ['true', 'with templates'],
              ['false', 'without'],
            ];
      return (
        <label>
          {LABELS[k]}
          <select name={k} value={f[k]} onChange={set(k)}>
            <option value="">any</option>
            {options.map(([v, t]) => (
              <option value={v}>{t}</option>
            ))}
          </select>
        </label>
      );
    }
    if (k === 'start' || k === 'end')
      return (
        <label>
          <span>
            {LABELS[k]} <Zone />
          </span>
          <input
            name={k}
            type="datetime-local"
            value={toLocalInput(f[k])}
            onInput={(e) => setF({ ...f, [k]: fromLocalInput((e.target as HTMLInputElement).value) })}
          />
        </label>
      );
    const money = k === 'min_cost' || k === 'max_cost';
    return (
      <label>
        {LABELS[k]}
        {money ? (
          <input name={k} type="number" min="0" step="any" value={f[k]} onInput={set(k)} />
        ) : (
          <input name={k} placeholder={PLACEHOLDERS[k]} value={f[k]} onInput={set(k)} />
        )}
      </label>
    );
  };
  const secondary = FILTERS.filter((k) => !PRIMARY.includes(k));
  const moreSet = secondary.filter((k) => filters.get(k)).length + (initialMetadata() ? 1 : 0) + initialScores().length;
  // Open while a filter behind it is set, or since the user opened it.
  const [moreOpen, setMoreOpen] = useState(moreSet > 0);
  useEffect(() => {
    if (moreSet > 0) setMoreOpen(true);
  }, [moreSet]);
  const hidesJudges = exclusions.some(([k, v]) => k === 'exclude_tag' && v === 'evaluator');
  return (
    <Form class="filters card compact" onSubmit={() => apply()}>
      <div class="filter-row">
        {PRIMARY.map(field)}
        <div class="windows">
          Last
          {WINDOWS.map(([label, ms]) => (
            <button type="button" onClick={() => apply({ start: new Date(Date.now() - ms).toISOString().slice(0, 16) + ':00Z', end: '' })}>
              {label}
            </button>
          ))}
        </div>
        <ApplyReset onReset={() => onApply(new URLSearchParams())} />
      </div>
      <div class="filter-row">
        <ExclusionPicker onExclude={(k, v) => apply({}, undefined, [...exclusions, [k, v]])} />
        <button
          type="button"
          class={`judge-toggle ${hidesJudges ? 'active' : ''}`}
          title="Evaluators record their judge calls as executions tagged evaluator"
          onClick={() =>
            apply(
              {},
              undefined,
              hidesJudges
                ? exclusions.filter(([k, v]) => !(k === 'exclude_tag' && v === 'evaluator'))
                : [...exclusions, ['exclude_tag', 'evaluator']],
            )
          }
        >
          {hidesJudges ? 'Show judge calls' : 'Hide judge calls'}
        </button>
      </div>
      <ExclusionChips exclusions={exclusions} onChange={(rest) => apply({}, undefined, rest)} />
      <details class="more-filters" open={moreOpen} onToggle={(e) => setMoreOpen((e.currentTarget as HTMLDetailsElement).open)}>
        <summary>More filters{moreSet > 0 ? ` (${moreSet} set)` : ''}</summary>
        <div class="more-grid">
          {secondary.map(field)}
          <label>
            Metadata (key=value)
            <input
              name="metadata"
              placeholder="plan=pro"
              value={metadata}
              onInput={(e) => setMetadata((e.target as HTMLInputElement).value)}
            />
          </label>
          <ScoreFilters projectId={projectId} params={scores} draft={draft} onDraft={setDraft} onApply={(p) => apply({}, p)} />
        </div>
      </details>
    </Form>
  );
}

/** A score's value in its column: a number to 3 places, true/false, a label, or a dash. */
