// A comparison's read of one prompt's executions (src/quality/compare.ts): which executions, in
// which window, grouped how. The executions' costs (executions/prompt-group-repository.ts) and the
// scores' rollup (scores/score-repository.ts groupScores) both answer it, each in its own SQL, from
// the one parameter set below: the two cannot disagree on what a group is.

/** How executions of one prompt are grouped for a comparison: by the version used, or by the reference (a label) it was fetched by. */
export type PromptGroupBy = 'version' | 'label';

export interface PromptGroupRead {
  projectId: string;
  promptId: string;
  by: PromptGroupBy;
  /** Started in [start, end), ClickHouse time text (whole hours). */
  start: string;
  end: string;
  /** The groups compared: versions as text ('6') or labels. */
  groups: string[];
}

/** The bound parameters of a prompt group read, as both readers' SQL name them. */
export function promptGroupParams(r: PromptGroupRead): Record<string, unknown> {
  return { cmp_p: r.projectId, cmp_prompt: r.promptId, cmp_start: r.start, cmp_end: r.end, cmp_groups: r.groups };
}
