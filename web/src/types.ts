// The shapes the console reads, as schema/api/*.json defines them (only the fields it uses). An
// interface named like a schema is checked against it by test/web/types.unit.test.ts: every field
// here exists there, and every field the schema requires is here.

export type Role = 'admin' | 'member' | 'viewer';

export interface MeContext {
  user_id: string;
  auth_method: 'api_key' | 'jwt' | 'none';
  project_id: string | null;
  role: Role;
  scope?: 'full' | 'ingest';
  key_name?: string;
  projects: Array<{ project_id: string; name: string; role: Role }>;
}

export interface ExecutionListItem {
  trace_id: string;
  agent_id: string;
  provider: string;
  model: string;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
  cost_usd: number;
  cost_source: 'computed' | 'provided' | 'unpriced';
  status: string;
  started_at: string;
  has_templates: boolean;
  template_count: number;
  span_count: number;
  source: 'api' | 'otlp';
  user_id: string | null;
  session_id: string | null;
  tags: string[];
  /** The API key that sent it and its name (null: no key, or the key was deleted; a POST answer has no name). */
  api_key_id?: string | null;
  api_key_name?: string | null;
}

/** A list item (always with its key and the key's name); with the `scores` parameter, each name's latest value on its trace (null when none). */
export interface ListedExecution extends ExecutionListItem {
  api_key_id: string | null;
  api_key_name: string | null;
  scores?: Record<string, number | boolean | string | null>;
}

export interface ExecutionList {
  items: ListedExecution[];
  total: number;
  limit: number;
  offset: number;
  next_cursor?: string | null;
}

export interface TemplateUsageRecord {
  prompt_id: string;
  version_ref?: string;
  version?: number;
  inputs?: Record<string, unknown>;
  role?: string | null;
  source?: string | null;
  message_index?: number | null;
}

export interface Execution extends ExecutionListItem {
  ended_at?: string;
  received_at?: string;
  error_message?: string | null;
  tokens_cached_in?: number;
  tokens_cache_write_in?: number;
  tokens_reasoning?: number;
  cost_computed_usd?: number | null;
  price_id?: string | null;
  usage_warnings?: string[];
  metadata?: Record<string, string>;
  environment?: string | null;
  template_usages?: TemplateUsageRecord[];
  scores?: Score[];
  usage_details?: Record<string, number>;
  pricing_context?: { service_tier: string | null; region: string | null; batch: boolean };
  cost_breakdown?: CostBreakdownLine[];
}

/** One line of an execution's cost breakdown (docs/spend.md, "Cost breakdown"). */
export interface CostBreakdownLine {
  usage_type: string;
  quantity: number;
  unit: 'tokens' | 'calls';
  /** exact decimal: USD per million tokens, or per call */
  rate: string | null;
  /** exact decimal */
  cost_usd: string;
  source: 'project' | 'catalogue' | 'caller';
  price_id: string | null;
  rule: string;
  calls: number;
  counted: boolean;
}

export interface HierarchySpan {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind?: string;
  start_time: string;
  end_time: string;
  start_time_ns: string;
  end_time_ns: string;
  duration_ms: number;
  status_code?: string;
  status_message?: string | null;
  span_class?: 'inference' | 'tool' | 'agent' | 'other';
  model?: string | null;
  provider?: string | null;
  tokens_in?: number | null;
  tokens_out?: number | null;
  usage_counted?: boolean;
  cost_usd?: number | null;
  cost_source?: string | null;
  attributes?: Record<string, unknown>;
  resource?: Record<string, unknown>;
  events?: unknown[];
  messages?: Record<string, unknown>;
  orphan?: boolean;
  synthetic?: boolean;
  children: HierarchySpan[];
}

export interface TimelineEvent {
  index: number;
  type: 'message' | 'tool_call' | 'tool_result' | 'tool';
  timestamp?: string;
  span_id?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string | null;
  arguments?: unknown;
  result?: unknown;
  is_error?: boolean;
  duration_ms?: number;
}

export interface Prompt {
  prompt_id: string;
  type: 'text' | 'chat';
  description: string | null;
  latest_version: number;
  labels: Record<string, number>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface PromptVersion {
  prompt_id: string;
  version: number;
  type: 'text' | 'chat';
  template:
    | string
    | Array<
        | { role: string; content: string; type?: undefined; name?: string }
        | { type: 'placeholder'; name: string; role?: undefined; content?: undefined }
      >;
  variables: string[];
  placeholders: string[];
  config: Record<string, unknown>;
  commit_message: string | null;
  created_at: string;
  created_by: string | null;
  labels: string[];
  rolled_back_from: number | null;
}

export interface VersionSummary {
  version: number;
  created_at: string;
  created_by: string | null;
  commit_message: string | null;
  labels: string[];
  rolled_back_from: number | null;
}

export interface DiffPart {
  changed: boolean;
  lines: Array<{ op: 'equal' | 'add' | 'remove'; line: string }>;
}

export interface PromptDiff {
  prompt_id: string;
  from: number;
  to: number;
  changed: boolean;
  content: DiffPart;
  config: DiffPart;
}

export interface Latency {
  avg: number | null;
  p50: number | null;
  p95: number | null;
}

export interface VersionAnalytics {
  version: number;
  total_executions: number;
  total_cost: number;
  avg_cost: number;
  latency_ms: Latency;
  tokens_in: number;
  tokens_out: number;
}

export interface DailyCost {
  date: string;
  cost: number;
  executions: number;
}

export interface PromptAnalytics extends Omit<VersionAnalytics, 'version'> {
  prompt_id: string;
  /** the version the query asked for; null: every version */
  version: number | null;
  start: string;
  end: string;
  by_version: VersionAnalytics[];
  daily: DailyCost[];
}

export interface ProjectStats {
  start: string;
  end: string;
  prompts_count: number;
  total_cost: number;
  total_executions: number;
  avg_cost_per_execution: number;
  unpriced_executions: number;
  total_tokens_in: number;
  total_tokens_out: number;
  daily_costs: DailyCost[];
  top_prompts: Array<{ prompt_id: string; cost: number; execution_count: number; avg_cost: number }>;
  by_model: Array<{ provider: string; model: string; cost: number; execution_count: number; unpriced_executions: number }>;
}

export interface BudgetAlert {
  kind: 'threshold' | 'exceeded';
  month: string;
  pct: number;
  spent_usd: number;
  budget_monthly_usd: number;
  at: string;
  delivery: {
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    last_attempt_at: string | null;
    delivered_at: string | null;
  };
}

export interface Budget {
  budget_monthly_usd: number | null;
  alert_threshold_pct: number | null;
  enforcement_mode: 'alert' | 'block' | null;
  webhook_url: string | null;
  month: string;
  spent_usd: number;
  remaining_usd: number | null;
  pct_used: number | null;
  status: 'ok' | 'alert' | 'exceeded';
  blocked: boolean;
  reset_at: string;
  webhook_secret?: string;
  alerts: BudgetAlert[];
}

export interface ApiKey {
  key_id: string;
  name: string;
  prefix: string;
  scope: 'full' | 'ingest';
  project_id: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  status: 'active' | 'expired' | 'revoked';
  role: Role;
}

export interface ModelPrice {
  source: 'project' | 'catalogue';
  price_id: string;
  provider: string | null;
  model: string;
  match: string | null;
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok: number | null;
  cache_write_per_mtok: number | null;
  cache_write_1h_per_mtok: number | null;
  reasoning_per_mtok: number | null;
  input_audio_per_mtok: number | null;
  output_audio_per_mtok: number | null;
  input_image_per_mtok: number | null;
  output_image_per_mtok: number | null;
  web_search_per_call: number | null;
  tiers: Array<Record<string, unknown>>;
  conditions: Array<Record<string, unknown>>;
  effective_from: string | null;
  in_force: boolean;
  created_at: string | null;
  created_by: string | null;
}

export interface Retention {
  days: number | null;
  updated_at: string | null;
  applies_to: string[];
}

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface PromptWithLatest extends Prompt {
  latest: PromptVersion;
}

export type ScoreDataType = 'NUMERIC' | 'CATEGORICAL' | 'BOOLEAN';

export interface Score {
  id: string;
  trace_id: string | null;
  span_id: string | null;
  session_id: string | null;
  name: string;
  data_type: ScoreDataType;
  value: number | boolean | string;
  comment: string | null;
  source: 'api' | 'annotation' | 'eval' | 'otel';
  author: string;
  config_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScoreConfig {
  config_id: string;
  name: string;
  data_type: ScoreDataType;
  min_value: number | null;
  max_value: number | null;
  categories: string[] | null;
  description: string | null;
  archived: boolean;
  created_at: string;
  updated_at: string;
}

export interface Interval {
  low: number;
  high: number;
}

export type GroupScore =
  | { data_type: 'NUMERIC'; n: number; scored_executions: number; mean: number; ci: Interval | null }
  | { data_type: 'BOOLEAN'; n: number; scored_executions: number; rate: number; ci: Interval | null }
  | { data_type: 'CATEGORICAL'; n: number; scored_executions: number; labels: Record<string, number> };

export interface CompareGroup {
  version?: number;
  label?: string;
  executions: number;
  cost: { total_usd: number; per_execution: { mean_usd: number | null; p50_usd: number | null; p95_usd: number | null } };
  latency_ms: { p50: number | null; p95: number | null };
  tokens: { in: number; out: number };
  scores: Record<string, GroupScore>;
}

export interface TestOutcome {
  test: 'welch_t' | 'two_proportion_z';
  difference: number | null;
  ci: Interval | null;
  p_value: number | null;
  significant: boolean;
}

export interface PromptComparison {
  prompt_id: string;
  by: 'version' | 'label';
  window: { start: string; end: string };
  /** p50 and p95 exact from the executions, or estimated from daily samples (over 100,000 executions) */
  quantiles: 'exact' | 'estimated';
  groups: [CompareGroup, CompareGroup];
  comparison: {
    cost_per_execution: TestOutcome & { relative: number | null; verdict: string };
    scores: Record<string, TestOutcome & { verdict: string }>;
  };
}

export interface SpendMeasures {
  cost_usd: string;
  executions: number;
  tokens_in: number;
  tokens_out: number;
  unpriced_executions: number;
}

/** A breakdown row: the measures plus each group_by dimension's value under its name. */
export type SpendRow = SpendMeasures & Record<string, string | number>;

export interface SpendBreakdown {
  start: string;
  end: string;
  group_by: string[];
  granularity: string | null;
  source: string;
  total: SpendMeasures;
  groups: number;
  rows: SpendRow[];
  other: (SpendMeasures & { groups: number }) | null;
}

export interface ScopedBudgetAlert {
  period_start: string;
  threshold_pct: number;
  pct_used: number;
  spent_usd: number;
  created_at: string;
  delivery_attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

export type BudgetScopeKind = 'project' | 'agent' | 'user' | 'tag' | 'api_key';

export interface ScopedBudget {
  id: string;
  scope: { kind: BudgetScopeKind; value: string | null };
  period: 'day' | 'week' | 'month';
  amount_usd: number;
  thresholds_pct: number[];
  enforcement_mode: 'alert' | 'block';
  webhook_url: string | null;
  webhook_format: 'signed' | 'slack';
  webhook_secret?: string;
  period_start: string;
  reset_at: string;
  spent_usd: number;
  remaining_usd: number;
  pct_used: number;
  status: string;
  blocked: boolean;
  created_at: string;
  updated_at: string;
  alerts?: ScopedBudgetAlert[];
}

export interface ScopedBudgetList {
  items: ScopedBudget[];
}

export interface RepriceDryRun {
  dry_run: true;
  provider: string | null;
  model: string | null;
  from: string;
  to: string;
  executions_scanned: number;
  executions_changed: number;
  spend_before_usd: string;
  spend_after_usd: string;
  spend_delta_usd: string;
}

export interface RepriceJob {
  id: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  provider: string | null;
  model: string | null;
  from: string;
  to: string;
  requested_by: string;
  executions_total: number;
  executions_scanned: number;
  executions_changed: number;
  spend_delta_usd: string;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

interface Activity {
  executions: number;
  errors: number;
  cost_usd: string;
  tokens_in: number;
  tokens_out: number;
  first_seen: string;
  last_seen: string;
}

export interface SessionSummary extends Activity {
  session_id: string;
  user_id: string | null;
}

export interface UserSummary extends Activity {
  user_id: string;
  sessions: number;
}

export interface SessionList {
  items: SessionSummary[];
  /** null unless asked for (with_total=true) */
  total: number | null;
  limit: number;
  offset: number;
}

/** A message of a stored conversation (schema ConversationMessage). */
export interface ConversationMessage {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ id: string; name: string; arguments?: unknown }>;
  tool_call_id?: string;
  name?: string;
}

export interface SessionTurn extends ExecutionListItem {
  earlier_messages: number;
  messages: ConversationMessage[];
}

export interface SessionConversation {
  session_id: string;
  items: SessionTurn[];
  total: number;
  limit: number;
  next_cursor: string | null;
}

export interface UserList {
  items: UserSummary[];
  limit: number;
}

// Datasets, experiment runs and evaluators (docs/datasets.md, docs/evaluators.md).

export interface Dataset {
  dataset_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  items: number;
  created_at: string;
  updated_at: string;
}

export interface DatasetList {
  items: Dataset[];
  next_cursor: string | null;
}

export interface DatasetItem {
  item_id: string;
  dataset_id: string;
  version: number;
  input: unknown;
  expected_output: unknown;
  metadata: Record<string, unknown>;
  source_trace_id: string | null;
  archived: boolean;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DatasetItemList {
  items: DatasetItem[];
  next_cursor: string | null;
}

export interface DatasetImportResult {
  import_id: string;
  dataset_id: string;
  format: string;
  status: string;
  imported: number;
  rejected_count: number;
  rejected: Array<{ line: number; detail: string }>;
  last_line: number;
  attempts: number;
  error: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
  skipped_lines: number;
}

export interface DatasetRun {
  run_id: string;
  dataset_id: string;
  name: string;
  description: string | null;
  prompts: Array<{ prompt_id: string; version: number }>;
  model: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface DatasetRunList {
  items: DatasetRun[];
  next_cursor: string | null;
}

export interface DatasetRunTotals {
  dataset_items?: number;
  items: { linked: number; done: number; failed: number; awaiting_execution: number; executions_with_error: number };
  cost: { total_usd: number; per_item: { mean_usd: number | null; p50_usd: number | null; p95_usd: number | null } };
  latency_ms: { p50: number | null; p95: number | null };
  tokens: { in: number; out: number };
  scores: Record<string, GroupScore>;
}

export interface DatasetRunItem {
  item_id: string;
  item_version: number;
  input: unknown;
  expected_output: unknown;
  status: 'done' | 'failed';
  error: string | null;
  linked_by: 'api' | 'otel';
  trace_id: string | null;
  execution: {
    status: string;
    model: string;
    output: unknown;
    cost_usd: number;
    latency_ms: number;
    tokens_in: number;
    tokens_out: number;
    started_at: string;
  } | null;
  scores: Record<string, { value: number | boolean | string; data_type: ScoreDataType; score_id: string }>;
}

export interface DatasetRunResult extends DatasetRun {
  totals: DatasetRunTotals;
  items: DatasetRunItem[];
  next_cursor: string | null;
}

/** A tested difference of b against a (run-compare.ts): the test named, its difference, interval and verdict. */
export interface RunTest {
  test: 'paired_t' | 'welch_t' | 'mcnemar_exact' | 'two_proportion_z';
  n?: number;
  difference: number | null;
  ci: Interval | null;
  p_value: number | null;
  significant: boolean;
  verdict: string;
}

export interface DatasetRunComparison {
  dataset_id: string;
  runs: [DatasetRun & { totals: DatasetRunTotals }, DatasetRun & { totals: DatasetRunTotals }];
  comparison: { paired_items: number; cost_per_item: RunTest; latency_ms: RunTest; scores: Record<string, RunTest> };
  items: Array<{ item_id: string; a: DatasetRunItem | null; b: DatasetRunItem | null }>;
  next_cursor: string | null;
}

export interface Evaluator {
  evaluator_id: string;
  name: string;
  prompt_id: string;
  prompt_label: string;
  variables: Record<string, string>;
  connection_id: string;
  score_name: string;
  agent_id: string;
  target:
    | { kind: 'executions'; filter: Record<string, unknown>; sampling_rate: number }
    | { kind: 'dataset_run'; dataset_id: string; run_id: string };
  concurrency: number;
  max_calls_per_minute: number;
  timeout_ms: number;
  paused: boolean;
  status: {
    state: 'active' | 'paused';
    queued: number;
    done: number;
    failed: number;
    last_error: string | null;
    last_error_at: string | null;
  };
  scanned_to: string | null;
  created_at: string;
  updated_at: string;
  max_daily_cost_usd: number | null;
}

export interface EvaluatorList {
  items: Evaluator[];
}

export interface PlaygroundRunResult {
  run_id: string;
  prompt: { prompt_id: string; version: number } | null;
  messages: unknown[];
  results: Array<{
    connection_id: string;
    connection_name: string;
    provider: string;
    model: string;
    status: 'ok' | 'error';
    output: string | null;
    error: string | null;
    tokens_in: number;
    tokens_out: number;
    latency_ms: number;
    cost_usd: string;
    cost_source: string;
    trace_id: string;
  }>;
}

// Monitors (docs/monitors.md).
export interface MonitorEvaluationFigures {
  evaluated_at: string;
  metric: string;
  current: { start: string; end: string; n: number; value: number | null };
  baseline: { start: string; end: string; n: number; value: number | null; label?: string } | null;
  test: {
    name: 'welch_t' | 'two_proportion_z';
    of: string;
    statistic: number | null;
    p_value: number | null;
    alpha: number;
    difference: number | null;
    ci: { low: number; high: number } | null;
  } | null;
  breached: boolean | null;
  reason: string;
}

export interface Monitor {
  monitor_id: string;
  name: string;
  metric: { kind: string; score_name?: string; value?: string };
  filter: Record<string, unknown>;
  window_minutes: number;
  condition: Record<string, unknown> & { kind: 'threshold' | 'change' };
  interval_minutes: number;
  enabled: boolean;
  webhook_url: string | null;
  webhook_format: 'signed' | 'slack';
  state: 'ok' | 'breached';
  state_since: string;
  last_evaluated_at: string | null;
  last_evaluation: MonitorEvaluationFigures | null;
  next_evaluation_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface MonitorList {
  items: Monitor[];
}

export interface MonitorAlert {
  alert_id: string;
  monitor_id: string;
  kind: 'triggered' | 'resolved';
  resolves_alert_id: string | null;
  evaluation: MonitorEvaluationFigures;
  created_at: string;
  delivery: {
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    last_attempt_at: string | null;
    delivered_at: string | null;
  };
}

export interface MonitorAlertList {
  items: MonitorAlert[];
  next_cursor: string | null;
}

export interface ModelConnection {
  connection_id: string;
  name: string;
  base_url: string;
  model: string;
  provider: string;
  api_key_set: boolean;
  created_at: string;
  updated_at: string;
}

export type ExperimentStatus = 'queued' | 'running' | 'done' | 'capped' | 'blocked' | 'failed' | 'cancelled';

/** A deterministic check of an experiment's answers (schema ExperimentCheck, one of its kinds). */
export type ExperimentCheck =
  | { kind: 'exact_match'; score_name?: string; case_sensitive?: boolean }
  | { kind: 'contains'; score_name?: string; value?: string; case_sensitive?: boolean }
  | { kind: 'regex'; score_name?: string; pattern: string; flags?: string }
  | { kind: 'json_valid'; score_name?: string }
  | { kind: 'numeric_tolerance'; score_name?: string; tolerance: number; relative?: boolean };

export interface Experiment {
  experiment_id: string;
  dataset_id: string;
  run_id: string;
  name: string;
  prompt: { prompt_id: string; version: number };
  connection_id: string;
  evaluator_ids?: string[];
  checks?: ExperimentCheck[];
  concurrency?: number;
  max_attempts?: number;
  timeout_ms?: number;
  max_cost_usd?: string | null;
  status: ExperimentStatus;
  status_detail: string | null;
  progress: { items: number; pending: number; done: number; failed: number; spent_usd: string };
  created_by?: string;
  created_at: string;
  started_at?: string | null;
  finished_at?: string | null;
}

export interface ExperimentList {
  items: Experiment[];
  next_cursor: string | null;
}

export interface ExperimentItemList {
  items: Array<{
    item_id: string;
    item_version: number;
    status: 'pending' | 'done' | 'failed';
    trace_id: string | null;
    output: string | null;
    cost_usd: string;
    attempts: number;
    error: string | null;
  }>;
  next_cursor: string | null;
}

export interface PromptLabelGate {
  prompt_id: string;
  label: string;
  dataset_id: string;
  scores: string[];
  lower_is_better: string[];
  alpha: number;
  max_cost_increase_pct: number | null;
  require_approval: boolean;
  updated_by: string;
  created_at: string;
  updated_at: string;
}

export interface PromptLabelGateList {
  items: PromptLabelGate[];
}

interface GateRun {
  run_id: string;
  name: string;
  created_at: string;
}

export interface PromptLabelGateCheck {
  prompt_id: string;
  label: string;
  version: number;
  current_version: number | null;
  passed: boolean;
  gate: PromptLabelGate;
  evidence: { candidate_run: GateRun | null; current_run: GateRun | null };
  conditions: Array<{
    condition: 'evidence_candidate' | 'evidence_current' | 'score' | 'cost' | 'approval';
    score?: string;
    status: 'passed' | 'failed' | 'not_evaluated' | 'not_applicable';
    detail: string;
    figures?: Record<string, unknown>;
  }>;
}

export interface PromptLabelEventList {
  items: Array<{
    event_id: string;
    label: string;
    action: 'moved' | 'overridden' | 'removed' | 'approved' | 'gate_set' | 'gate_removed';
    from_version: number | null;
    to_version: number | null;
    actor: string;
    api_key_id: string | null;
    reason: string | null;
    details: unknown;
    created_at: string;
  }>;
  next_cursor: string | null;
}
