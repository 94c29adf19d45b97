// One judgement (docs/evaluators.md, "A judgement"): the execution read, the judge prompt rendered
// with its variables, one call to the judge, the call recorded as an execution of the evaluator's
// agent (so its tokens and cost are in spend and budgets), its answer parsed and held to the score
// config, and the score written (source eval, the reasoning as comment, its id = the judge call's
// trace id). The outcome says whether to retry; nothing here writes the evaluation's state.
import { Conflict, DomainError } from '../errors.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import type { JudgeBudget } from './judge-budget.ts';
import type { ExecutionRecorder } from '../executions/record.ts';
import type { ExecutionDetail } from '../executions/execution-detail-repository.ts';
import type { ExecutionListing } from '../executions/execution-listing-repository.ts';
import type { PromptService } from '../prompts/service.ts';
import type { ScoreConfig, ScoreConfigs } from '../scores/score-config-repository.ts';
import type { ScoreService } from '../scores/service.ts';
import type { Connections } from './connection-repository.ts';
import type { EvaluatorRow } from './evaluator.ts';
import { callJudge } from './judge-client.ts';
import { itemOfExecution, judgeInputs, judgeTraceId, type JudgedItem } from './judged-item.ts';
import { parseJudgement } from './judge-output.ts';
import { keyRedactor } from './key-redaction.ts';
import type { Limiter } from './limiter.ts';

export type Outcome =
  | { kind: 'done'; scoreId: string; judgeTraceId: string }
  | { kind: 'failed'; error: string; judgeTraceId?: string }
  | { kind: 'retry'; error: string };

export interface JudgementDeps {
  /** The executions evaluators read: one with its conversation, and those a target selects. */
  queries: Pick<ExecutionDetail, 'get'> & Pick<ExecutionListing, 'export' | 'arrivedSince'>;
  recorder: ExecutionRecorder;
  prompts: PromptService;
  scoreConfigs: ScoreConfigs;
  scores: ScoreService;
  connections: Connections;
  limiter: Limiter;
  allowPrivate: boolean;
  /** Daily judge budgets (judge-budget.ts). */
  budget: JudgeBudget;
}

const failed = (error: string, judge?: string): Outcome => ({ kind: 'failed', error, ...(judge ? { judgeTraceId: judge } : {}) });

/** What a target gives to judge: an execution's item (a dataset run's item comes from its own reader). */
export async function executionItem(deps: Pick<JudgementDeps, 'queries'>, projectId: string, traceId: string) {
  const execution = await deps.queries.get(projectId, traceId, true);
  return execution ? itemOfExecution(execution as never) : undefined;
}

/** `onCost` learns the judge call's recorded cost (nano-dollars) when one was recorded. */
export async function judge(
  deps: JudgementDeps,
  ev: EvaluatorRow,
  traceId: string,
  item: JudgedItem | undefined,
  onCost: (costNanos: bigint) => void = () => undefined,
): Promise<Outcome> {
  const projectId = ev.project_id;
  if (!item) return failed(`execution ${traceId} not found`);
  const config = (await deps.scoreConfigs.liveByName(projectId, [ev.score_name])).get(ev.score_name);
  if (!config) return failed(`score config "${ev.score_name}" is not live (archived or deleted): nothing to hold the score to`);
  if (ev.max_daily_cost_usd === null) return judgeOnce(deps, ev, traceId, item, config, onCost);
  const slot = await deps.budget.acquire(projectId, ev.evaluator_id, ev.max_daily_cost_usd);
  if (!slot.ok)
    return failed(
      `daily judge budget reached: $${slot.spent} of $${fromScaled(toScaled(ev.max_daily_cost_usd, NANOS), NANOS)} spent today (UTC)`,
    );
  let cost: bigint | undefined;
  try {
    return await judgeOnce(deps, ev, traceId, item, config, (c) => {
      cost = c;
      onCost(c);
    });
  } finally {
    slot.done(cost);
  }
}

/** The judgement itself; `priced` learns the judge call's recorded cost (nano-dollars). */
async function judgeOnce(
  deps: JudgementDeps,
  ev: EvaluatorRow,
  traceId: string,
  item: JudgedItem,
  config: ScoreConfig,
  priced: (costNanos: bigint) => void = () => undefined,
): Promise<Outcome> {
  const projectId = ev.project_id;

  let rendered;
  try {
    rendered = await deps.prompts.render(
      projectId,
      ev.prompt_id,
      { kind: 'label', label: ev.prompt_label },
      judgeInputs(item, ev.variables),
    );
  } catch (err) {
    if (err instanceof DomainError) return failed(`judge prompt ${ev.prompt_id}@${ev.prompt_label}: ${err.detail}`);
    throw err;
  }
  const messages =
    'messages' in rendered && rendered.messages ? rendered.messages : [{ role: 'user', content: 'text' in rendered ? rendered.text : '' }];

  let conn;
  try {
    conn = await deps.connections.open(projectId, ev.connection_id);
  } catch (err) {
    return failed(`model connection: ${err instanceof DomainError ? err.detail : (err as Error).message}`);
  }
  const started = new Date();
  const answer = await deps.limiter.run(ev.evaluator_id, { concurrency: ev.concurrency, maxCallsPerMinute: ev.max_calls_per_minute }, () =>
    callJudge({
      baseUrl: conn.baseUrl,
      apiKey: conn.apiKey,
      model: conn.model,
      messages,
      params: rendered.config,
      timeoutMs: ev.timeout_ms,
      allowPrivate: deps.allowPrivate,
    }),
  );
  if (!answer.ok) return answer.retryable ? { kind: 'retry', error: answer.error } : failed(answer.error);

  // The call cost money whatever it said: it is recorded before its answer is judged.
  const judgeId = judgeTraceId(ev.evaluator_id, traceId);
  try {
    const { execution } = await deps.recorder.record(projectId, {
      trace_id: judgeId,
      agent_id: ev.agent_id,
      provider: conn.provider,
      model: answer.model,
      tokens_in: answer.usage.tokensIn,
      tokens_out: answer.usage.tokensOut,
      tokens_cached_in: answer.usage.cachedIn,
      tokens_reasoning: answer.usage.reasoning,
      latency_ms: answer.latencyMs,
      started_at: started.toISOString(),
      status: 'ok',
      tags: ['evaluator'],
      metadata: { evaluator_id: ev.evaluator_id, evaluator_name: ev.name, evaluated_trace_id: traceId },
      conversation_history: [...messages, { role: 'assistant', content: answer.content }],
    });
    priced(toScaled(execution.cost_usd, NANOS));
  } catch (err) {
    // Recorded by an earlier attempt of this judgement (a store failed after it): kept as it was.
    if (!(err instanceof Conflict)) throw err;
  }

  const verdict = parseJudgement(answer.content, config, keyRedactor(conn.apiKey));
  if (!verdict.ok) return failed(verdict.reason, judgeId);
  try {
    await deps.scores.upsert(
      projectId,
      [{ id: judgeId, trace_id: traceId, name: ev.score_name, value: verdict.value, comment: verdict.reasoning, source: 'eval' }],
      `evaluator:${ev.evaluator_id}`,
      () => '',
    );
  } catch (err) {
    if (err instanceof DomainError) return failed(`score refused: ${err.detail}`, judgeId);
    throw err;
  }
  return { kind: 'done', scoreId: judgeId, judgeTraceId: judgeId };
}
