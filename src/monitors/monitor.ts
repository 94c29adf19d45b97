// A monitor as given, stored and shown (docs/monitors.md): a metric over the executions an
// evaluator-style filter selects, a sliding window ending at the evaluation, a condition, and the
// alert channel of the budget alerts (signed webhook or Slack). Checks beyond the JSON schema
// (combinations the schema cannot say) are here, each naming its field.
import { badRequest } from '../errors.ts';
import type { ExecutionFilter } from '../evaluators/evaluator.ts';
import type { WebhookFormat } from '../spend/budget-repository.ts';

export type Metric =
  | { kind: 'score_mean'; score_name: string }
  /** BOOLEAN scores: the share of `value` ('true' by default); CATEGORICAL: the share of the label `value`. */
  | { kind: 'score_rate'; score_name: string; value?: string }
  | { kind: 'error_rate' }
  | { kind: 'latency_p95' }
  | { kind: 'cost_per_execution' }
  | { kind: 'executions_count' };

export type Direction = 'increase' | 'decrease' | 'any';
export type Baseline = 'previous_window' | { label: string };

export type Condition =
  | { kind: 'threshold'; op: '>' | '>=' | '<' | '<='; value: number; min_samples: number }
  | { kind: 'change'; against: Baseline; direction: Direction; alpha: number; min_samples: number };

export type ConditionInput =
  | { kind: 'threshold'; op: '>' | '>=' | '<' | '<='; value: number; min_samples?: number }
  | { kind: 'change'; against?: Baseline; direction?: Direction; alpha?: number; min_samples?: number };

export interface MonitorInput {
  name: string;
  metric: Metric;
  filter?: ExecutionFilter;
  window_minutes: number;
  condition: ConditionInput;
  interval_minutes?: number;
  enabled?: boolean;
  webhook_url?: string | null;
  webhook_format?: WebhookFormat;
}

export type MonitorUpdate = Partial<MonitorInput> & { rotate_webhook_secret?: boolean };

export type MonitorState = 'ok' | 'breached';

export type MonitorRow = {
  monitor_id: string;
  project_id: string;
  name: string;
  metric: Metric;
  filter: ExecutionFilter;
  window_minutes: number;
  condition: Condition;
  interval_minutes: number;
  enabled: boolean;
  webhook_url: string | null;
  webhook_format: WebhookFormat;
  webhook_secret: string;
  state: MonitorState;
  state_since: Date;
  last_evaluated_at: Date | null;
  last_evaluation: Evaluation | null;
  next_evaluation_at: Date;
  created_at: Date;
  updated_at: Date;
};

/** The test a change condition ran (quality/statistics.ts, as `…/compare` runs them). */
export interface TestFigures {
  /** welch_t: means (score_mean, cost_per_execution); two_proportion_z: rates, and for latency_p95 the share of executions slower than the baseline's p95 */
  name: 'welch_t' | 'two_proportion_z';
  /** what was tested, in words */
  of: string;
  statistic: number | null;
  p_value: number | null;
  alpha: number;
  /** current − baseline of the tested quantity */
  difference: number | null;
  ci: { low: number; high: number } | null;
}

export interface WindowFigures {
  start: string;
  end: string;
  /** the executions (or, for score metrics, the scores) the figure is computed from */
  n: number;
  /** the metric; null when there is nothing to compute it from */
  value: number | null;
}

/** One evaluation: what it read, what it decided. */
export interface Evaluation {
  evaluated_at: string;
  metric: Metric['kind'];
  current: WindowFigures;
  /** change conditions: the figures compared against (the previous window, or the baseline label's executions) */
  baseline: (WindowFigures & { label?: string }) | null;
  test: TestFigures | null;
  /** true: the condition holds; false: it does not; null: too few samples to say (the state is kept) */
  breached: boolean | null;
  /** a sentence saying why */
  reason: string;
}

export const DEFAULTS = { interval_minutes: 5, alpha: 0.05, change_min_samples: 30, threshold_min_samples: 1 };

/** The condition with its defaults, checked against the metric. */
export function normalizeCondition(c: ConditionInput, metric: Metric, filter: ExecutionFilter): Condition {
  if (c.kind === 'threshold') {
    if (!Number.isFinite(c.value)) throw badRequest('condition.value: must be a finite number');
    return { kind: 'threshold', op: c.op, value: c.value, min_samples: c.min_samples ?? DEFAULTS.threshold_min_samples };
  }
  if (metric.kind === 'executions_count')
    throw badRequest(
      'condition.kind: a change of executions_count has no test among those of compare (counts are not samples); use a threshold',
    );
  const against = c.against ?? 'previous_window';
  if (typeof against === 'object') {
    if (!filter.prompt_label)
      throw badRequest(
        'condition.against.label: compares the executions of filter.prompt_label against those of this label; set filter.prompt_label',
      );
    if (filter.prompt_label === against.label)
      throw badRequest('condition.against.label: must differ from filter.prompt_label (the executions compared against it)');
  }
  const alpha = c.alpha ?? DEFAULTS.alpha;
  if (!(alpha > 0 && alpha < 1)) throw badRequest('condition.alpha: must be between 0 and 1, exclusive');
  return {
    kind: 'change',
    against,
    direction: c.direction ?? 'any',
    alpha,
    min_samples: c.min_samples ?? DEFAULTS.change_min_samples,
  };
}

export function checkMetric(metric: Metric): Metric {
  if ((metric.kind === 'score_mean' || metric.kind === 'score_rate') && !metric.score_name?.trim())
    throw badRequest(`metric.score_name: is required for ${metric.kind}`);
  if (metric.kind !== 'score_mean' && metric.kind !== 'score_rate' && 'score_name' in metric)
    throw badRequest(`metric.score_name: only score_mean and score_rate take a score name, not ${metric.kind}`);
  if (metric.kind !== 'score_rate' && 'value' in metric)
    throw badRequest(`metric.value: only score_rate takes a value, not ${metric.kind}`);
  return metric;
}

const METRIC_WORDS: Record<Metric['kind'], string> = {
  score_mean: 'mean score',
  score_rate: 'score rate',
  error_rate: 'error rate',
  latency_p95: 'p95 latency (ms)',
  cost_per_execution: 'cost per execution (USD)',
  executions_count: 'executions',
};

export function metricWords(m: Metric): string {
  if (m.kind === 'score_mean') return `mean of score "${m.score_name}"`;
  if (m.kind === 'score_rate') return `rate of score "${m.score_name}" = ${m.value ?? 'true'}`;
  return METRIC_WORDS[m.kind];
}

/** `canSeeUrl`: the full webhook URL for callers who may change it; others see its origin. */
export function presentMonitor(r: MonitorRow, canSeeUrl: boolean) {
  return {
    monitor_id: r.monitor_id,
    name: r.name,
    metric: r.metric,
    filter: r.filter,
    window_minutes: r.window_minutes,
    condition: r.condition,
    interval_minutes: r.interval_minutes,
    enabled: r.enabled,
    webhook_url: r.webhook_url === null ? null : canSeeUrl ? r.webhook_url : `${new URL(r.webhook_url).origin}/…`,
    webhook_format: r.webhook_format,
    state: r.state,
    state_since: r.state_since.toISOString(),
    last_evaluated_at: r.last_evaluated_at?.toISOString() ?? null,
    last_evaluation: r.last_evaluation,
    next_evaluation_at: r.enabled ? r.next_evaluation_at.toISOString() : null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export type Monitor = ReturnType<typeof presentMonitor>;
