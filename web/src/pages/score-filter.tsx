// The executions list's score filters: `score.<name>.gte|lte|eq=<value>` and `has_score=<name>`
// (repeatable), the API's own parameters, kept in the page's query string like the other filters.
// Conditions already applied show as chips (× removes one); the fields add one more on Apply.
import { useScoreConfigs, ScoreNames } from './scores.tsx';

const OPS: Array<[string, string]> = [
  ['gte', '≥'],
  ['lte', '≤'],
  ['eq', '='],
];
const SCORE_PARAM = /^score\.(.+)\.(gte|lte|eq)$/;

export const isScoreFilter = (key: string): boolean => key === 'has_score' || SCORE_PARAM.test(key);

export interface ScoreDraft {
  name: string;
  op: string;
  value: string;
  has: string;
}
export const emptyDraft: ScoreDraft = { name: '', op: 'gte', value: '', has: '' };

/** The applied conditions plus the one being entered (a name and a value; has-score names, comma-separated). */
export function withDraft(params: Array<[string, string]>, d: ScoreDraft): Array<[string, string]> {
  const out = [...params];
  if (d.name.trim() && d.value.trim()) out.push([`score.${d.name.trim()}.${d.op}`, d.value.trim()]);
  for (const n of d.has.split(',').map((x) => x.trim())) if (n) out.push(['has_score', n]);
  return out.filter(([k, v], i) => out.findIndex(([k2, v2]) => k2 === k && v2 === v) === i);
}

function describe([k, v]: [string, string]): string {
  if (k === 'has_score') return `has score ${v}`;
  const [, name, op] = SCORE_PARAM.exec(k)!;
  return `${name} ${OPS.find(([o]) => o === op)![1]} ${v}`;
}

export function ScoreFilters({
  projectId,
  params,
  draft,
  onDraft,
  onApply,
}: {
  projectId: string;
  params: Array<[string, string]>;
  draft: ScoreDraft;
  onDraft(d: ScoreDraft): void;
  onApply(params: Array<[string, string]>): void;
}) {
  const configs = useScoreConfigs(projectId).data?.items ?? [];
  const set = (k: keyof ScoreDraft) => (e: Event) => onDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });
  return (
    <>
      <div class="score-cond">
        <label>
          Score
          <input name="filter_score_name" list="filter-score-names" placeholder="name" value={draft.name} onInput={set('name')} />
          <ScoreNames id="filter-score-names" configs={configs} />
        </label>
        <label>
          is
          <select name="filter_score_op" value={draft.op} onChange={set('op')}>
            {OPS.map(([op, sign]) => (
              <option value={op}>{sign}</option>
            ))}
          </select>
        </label>
        <label>
          value
          <input name="filter_score_value" placeholder="0.8, true, a label" value={draft.value} onInput={set('value')} />
        </label>
      </div>
      <label>
        Has score
        <input name="has_score" list="filter-score-names" placeholder="name, name…" value={draft.has} onInput={set('has')} />
      </label>
      {params.length > 0 && (
        <div class="score-chips">
          {params.map((p, i) => (
            <span class="chip" data-filter={p[0]}>
              {describe(p)}
              <button
                type="button"
                class="link"
                title="Remove this condition"
                aria-label={`Remove ${describe(p)}`}
                onClick={() => onApply(params.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </span>
          ))}
        </div>
      )}
    </>
  );
}
