// The deterministic checks of an experiment (docs/datasets.md, "Checks"): a list of checks, each
// with the fields of its kind. Each becomes a BOOLEAN score named score_name (default: the kind);
// what a check means and whether it fits is the API's to say (its 422 detail is shown by the form).
import type { ExperimentCheck } from '../types.ts';

type Kind = ExperimentCheck['kind'];

export const CHECK_KINDS: Array<[Kind, string]> = [
  ['exact_match', 'exact match'],
  ['contains', 'contains'],
  ['regex', 'regex'],
  ['json_valid', 'valid JSON'],
  ['numeric_tolerance', 'numeric tolerance'],
];

/** A new check of a kind, with the fields it requires. */
export function newCheck(kind: Kind): ExperimentCheck {
  if (kind === 'regex') return { kind, pattern: '' };
  if (kind === 'numeric_tolerance') return { kind, tolerance: 0 };
  return { kind };
}

/** A check as the API takes it: empty optional fields left out. */
export function checkBody(c: ExperimentCheck): ExperimentCheck {
  return Object.fromEntries(Object.entries(c).filter(([, v]) => v !== '' && v !== undefined)) as ExperimentCheck;
}

export function ChecksEditor({ checks, onChange }: { checks: ExperimentCheck[]; onChange(c: ExperimentCheck[]): void }) {
  const set = (i: number, c: ExperimentCheck) => onChange(checks.map((x, j) => (j === i ? c : x)));
  return (
    <fieldset class="checks">
      <legend>Checks</legend>
      {checks.length === 0 && <p class="muted small">No check: add one to score every answer without a judge.</p>}
      {checks.map((c, i) => (
        <div class="check inline" data-check={c.kind}>
          <strong>{CHECK_KINDS.find(([k]) => k === c.kind)![1]}</strong>
          <CheckFields c={c} set={(x) => set(i, x)} />
          <input
            name="score_name"
            placeholder={`score name (${c.kind})`}
            value={c.score_name ?? ''}
            onInput={(e) => set(i, { ...c, score_name: (e.target as HTMLInputElement).value })}
          />
          <button type="button" class="link" onClick={() => onChange(checks.filter((_, j) => j !== i))}>
            remove
          </button>
        </div>
      ))}
      <div class="inline">
        <span class="muted small">Add a check:</span>
        {CHECK_KINDS.map(([kind, label]) => (
          <button type="button" class="add-check" data-kind={kind} onClick={() => onChange([...checks, newCheck(kind)])}>
            + {label}
          </button>
        ))}
      </div>
    </fieldset>
  );
}

function CheckFields({ c, set }: { c: ExperimentCheck; set(c: ExperimentCheck): void }) {
  const str = (e: Event) => (e.target as HTMLInputElement).value;
  const caseSensitive = (c: Extract<ExperimentCheck, { case_sensitive?: boolean }>) => (
    <label>
      <input
        type="checkbox"
        name="case_sensitive"
        checked={c.case_sensitive !== false}
        onChange={(e) => set({ ...c, case_sensitive: (e.target as HTMLInputElement).checked })}
      />
      case sensitive
    </label>
  );
  switch (c.kind) {
    case 'exact_match':
      return caseSensitive(c);
    case 'contains':
      return (
        <>
          <input
            name="value"
            placeholder="text (default: the expected output)"
            value={c.value ?? ''}
            onInput={(e) => set({ ...c, value: str(e) })}
          />
          {caseSensitive(c)}
        </>
      );
    case 'regex':
      return (
        <>
          <input name="pattern" placeholder="pattern" value={c.pattern} onInput={(e) => set({ ...c, pattern: str(e) })} />
          <input name="flags" placeholder="flags (imsu)" size={6} value={c.flags ?? ''} onInput={(e) => set({ ...c, flags: str(e) })} />
        </>
      );
    case 'numeric_tolerance':
      return (
        <>
          <label>
            tolerance
            <input
              type="number"
              name="tolerance"
              min={0}
              step="any"
              value={c.tolerance}
              onInput={(e) => set({ ...c, tolerance: Number(str(e)) })}
            />
          </label>
          <label>
            <input
              type="checkbox"
              name="relative"
              checked={c.relative === true}
              onChange={(e) => set({ ...c, relative: (e.target as HTMLInputElement).checked })}
            />
            relative (a fraction of the expected number)
          </label>
        </>
      );
    case 'json_valid':
      return <span class="muted small">the answer parses as JSON</span>;
  }
}
