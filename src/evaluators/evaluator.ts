// An evaluator as stored and shown (docs/evaluators.md), and its target: a discriminated union on
// `kind`, so another kind of target is one more case here, in evaluator-service.ts (its checks)
// and in the scan (evaluation-jobs.ts). A dataset run target reads experiment runs through
// `RunTargets` (src/datasets/runs.ts gives it; wired in compose/domain.ts).
import type { ListQuery } from '../executions/execution-filter.ts';

/**
 * The executions list filters an evaluator may use (GET /executions's, without paging, time and
 * scores), its metadata conditions as one object (key → value, each must hold).
 */
export type ExecutionFilter = Omit<
  ListQuery,
  'limit' | 'offset' | 'cursor' | 'start' | 'end' | 'has_score' | `score.${string}` | `metadata.${string}`
> & { metadata?: Record<string, string> };

/** The filter as the executions list takes it (`metadata.<key>` parameters). */
export function listFilterOf({ metadata, ...rest }: ExecutionFilter): Omit<ListQuery, 'limit' | 'offset' | 'cursor'> {
  return { ...rest, ...Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [`metadata.${k}`, v])) };
}

export type EvaluatorTarget =
  /** New executions matching the filter, each kept with probability sampling_rate (by trace id). */
  | { kind: 'executions'; filter: ExecutionFilter; sampling_rate: number }
  /** Every execution linked to an item of the run, each judged once, with the item's expected output. */
  | { kind: 'dataset_run'; dataset_id: string; run_id: string };

/** What a dataset run target reads of experiment runs (src/datasets/runs.ts). */
export interface RunTargets {
  /** Throws NotFound unless `runId` is a run of dataset `datasetId` in the project. */
  checkRun(projectId: string, datasetId: string, runId: string): Promise<void>;
  /** The trace ids of the run's linked items, in dataset order (NotFound for a run not the project's). */
  runExecutions(projectId: string, runId: string): Promise<string[]>;
  /** The item (at the version the run used) that `traceId` is linked to in the run; undefined if none. */
  runItemOf(projectId: string, runId: string, traceId: string): Promise<{ item_id: string; expected_output: unknown } | undefined>;
}

/** Where a judge prompt variable takes its value. */
export type VariableSource = 'input' | 'output' | 'expected_output' | 'metadata' | `metadata.${string}`;

export interface EvaluatorInput {
  name: string;
  prompt_id: string;
  prompt_label?: string;
  variables?: Record<string, VariableSource>;
  connection_id: string;
  score_name: string;
  agent_id?: string;
  target: EvaluatorTarget;
  concurrency?: number;
  max_calls_per_minute?: number;
  timeout_ms?: number;
  paused?: boolean;
  /** USD: no judgement is started once the evaluator's judge calls of the UTC day cost this much; null: no limit. */
  max_daily_cost_usd?: number | null;
}

export type EvaluatorUpdate = Partial<Omit<EvaluatorInput, 'name'>> & { name?: string };

export type EvaluatorRow = {
  evaluator_id: string;
  project_id: string;
  name: string;
  prompt_id: string;
  prompt_label: string;
  variables: Record<string, VariableSource>;
  connection_id: string;
  score_name: string;
  agent_id: string;
  target: EvaluatorTarget;
  concurrency: number;
  max_calls_per_minute: number;
  timeout_ms: number;
  paused: boolean;
  /** numeric as text (exact), null: no limit */
  max_daily_cost_usd: string | null;
  scanned_to: Date | null;
  created_at: Date;
  updated_at: Date;
};

export interface EvaluationCounts {
  queued: number;
  done: number;
  failed: number;
  last_error: string | null;
  last_error_at: string | null;
}

export const DEFAULTS = { prompt_label: 'production', concurrency: 4, max_calls_per_minute: 600, timeout_ms: 30_000 };

export function presentEvaluator(r: EvaluatorRow, counts: EvaluationCounts) {
  return {
    evaluator_id: r.evaluator_id,
    name: r.name,
    prompt_id: r.prompt_id,
    prompt_label: r.prompt_label,
    variables: r.variables,
    connection_id: r.connection_id,
    score_name: r.score_name,
    agent_id: r.agent_id,
    target: r.target,
    concurrency: r.concurrency,
    max_calls_per_minute: r.max_calls_per_minute,
    timeout_ms: r.timeout_ms,
    paused: r.paused,
    max_daily_cost_usd: r.max_daily_cost_usd === null ? null : Number(r.max_daily_cost_usd),
    status: { state: r.paused ? 'paused' : 'active', ...counts },
    scanned_to: r.scanned_to?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export type Evaluator = ReturnType<typeof presentEvaluator>;
