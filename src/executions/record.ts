// Direct execution records (POST /executions): validated body → one executions row, priced,
// with template versions resolved. Idempotent on (project, trace_id): the first write is 201, a
// repeat with the same content 200 with the stored execution, other content 409. The check
// reads the trace index in ClickHouse, so it holds across restarts.
import { badRequest, conflict, NotFound, unprocessable } from '../errors.ts';
import type { BatchWriter } from '../stores/batch-writer.ts';
import type { PromptService } from '../prompts/service.ts';
import { parseVersionRef } from '../prompts/prompt-input.ts';
import type { PriceResolver } from '../pricing/prices.ts';
import { outsideStartWindow, parseTime, toClickHouseTime, type StartWindow } from '../time.ts';
import { capCost, priceCall } from './pricing.ts';
import { fromScaled, NANOS } from '../decimal.ts';
import { contentHash as hashOf, executionRow, templateUsageColumns, type ExecutionRow, type ExecutionSource } from './row.ts';
import type { ExecutionAssembly } from './execution-assembly-repository.ts';
import type { ExecutionDetail } from './execution-detail-repository.ts';
import { presentDetail } from './present.ts';
import type { PricingContext, UsageDetails } from '../pricing/cost.ts';
import { addDetails, contextColumns, CostLines } from './cost-lines.ts';

export interface ExecutionInput {
  trace_id: string;
  agent_id?: string;
  provider?: string;
  model?: string;
  tokens_in?: number;
  tokens_out?: number;
  tokens_cached_in?: number;
  tokens_cache_write_in?: number;
  tokens_reasoning?: number;
  latency_ms?: number;
  started_at?: string | number;
  ended_at?: string | number;
  status?: 'ok' | 'error';
  error_message?: string;
  cost_usd?: number;
  session_id?: string;
  user_id?: string;
  tags?: string[];
  metadata?: Record<string, string>;
  /** The deployment environment (production, staging, ...): the `environment` spend dimension. */
  environment?: string;
  /** Usage types beyond the totals, each a part of one (docs/spend.md, "Usage types"). */
  usage_details?: UsageDetails;
  /** What price conditions match against. */
  service_tier?: string;
  region?: string;
  batch?: boolean;
  conversation_history?: Array<{ role: string; content?: string | null; [k: string]: unknown }>;
  template_usages?: Array<{
    prompt_id: string;
    version?: string | number;
    inputs?: Record<string, unknown>;
    role?: string;
    source?: string;
    message_index?: number;
  }>;
}

export interface RecordDeps {
  writer: BatchWriter;
  prompts: PromptService;
  prices: PriceResolver;
  queries: Pick<ExecutionAssembly, 'traceHash'> & Pick<ExecutionDetail, 'get'>;
  /** The start times accepted at `nowMs` (time.ts startWindow): a record outside is a 400. */
  startWindow(nowMs: number): StartWindow;
  /** Called after a write that moved the project's spend (budget evaluation: domain.spend.spendMoved). */
  onSpendMoved?: (projectId: string) => void;
  /** An execution of this trace was written (its scores take its dimensions). */
  onExecutionsWritten?: (projectId: string, traceIds: string[]) => void;
}

export function createExecutionRecorder(deps: RecordDeps) {
  // One check-then-write at a time per trace on this node, so two concurrent identical requests
  // cannot both see "new" and both write.
  const inFlight = new Map<string, Promise<void>>();

  async function buildRow(projectId: string, input: ExecutionInput, contentHash: string, apiKeyId: string, source: ExecutionSource) {
    const messages = input.conversation_history ?? [];
    const usages = input.template_usages ?? [];
    const resolved = [];
    for (const [i, u] of usages.entries()) {
      if (u.message_index !== undefined && u.message_index >= messages.length) {
        throw unprocessable(
          `template_usages[${i}].message_index: ${u.message_index} is outside conversation_history (${messages.length} messages)`,
        );
      }
      const ref = u.version ?? 'latest';
      let version: number;
      try {
        version = (await deps.prompts.version(projectId, u.prompt_id, parseVersionRef(ref, `template_usages[${i}].version`))).version;
      } catch (err) {
        if (err instanceof NotFound) {
          throw unprocessable(
            err.resource === 'prompt'
              ? `template_usages[${i}].prompt_id: prompt ${u.prompt_id} does not exist`
              : `template_usages[${i}].version: version ${ref} of prompt ${u.prompt_id} does not exist`,
          );
        }
        throw err;
      }
      resolved.push({ ...u, version_ref: String(ref), version });
    }

    const receivedAt = new Date();
    const latency = input.latency_ms ?? 0;
    const startedAt = input.started_at !== undefined ? parseTime(input.started_at, 'started_at') : new Date(receivedAt.getTime() - latency);
    const endedAt = input.ended_at !== undefined ? parseTime(input.ended_at, 'ended_at') : new Date(startedAt.getTime() + latency);
    if (endedAt < startedAt) throw unprocessable('ended_at: is before started_at');
    const outside = outsideStartWindow(startedAt.getTime(), deps.startWindow(receivedAt.getTime()));
    if (outside) throw badRequest(`started_at: ${outside}`);

    const details: Record<string, number> = {};
    addDetails(details, input.usage_details);
    const usage = {
      tokensIn: input.tokens_in ?? 0,
      tokensOut: input.tokens_out ?? 0,
      cachedIn: input.tokens_cached_in ?? 0,
      cacheWriteIn: input.tokens_cache_write_in ?? 0,
      reasoning: input.tokens_reasoning ?? 0,
      details,
    };
    const context: PricingContext = {
      ...(input.service_tier ? { service_tier: input.service_tier.toLowerCase() } : {}),
      ...(input.region ? { region: input.region.toLowerCase() } : {}),
      ...(input.batch || input.service_tier?.toLowerCase() === 'batch' ? { batch: true } : {}),
    };
    const priced = await priceCall(deps.prices, projectId, {
      provider: input.provider ?? '',
      model: input.model ?? '',
      at: startedAt,
      usage,
      provided: input.cost_usd,
      context,
    });
    const lines = new CostLines();
    lines.add(priced);
    const pricingContext = contextColumns(context);
    const warnings = [...(priced.computed?.warnings ?? [])];
    // Absurd usage at the dearest price can pass what an execution holds: capped and said, as traced executions are.
    const costNanos = capCost(priced.costNanos, 'cost_usd', warnings);
    const computedNanos = priced.computed ? capCost(priced.computed.costNanos, 'cost_computed_usd', warnings) : undefined;
    if ((input.tokens_reasoning ?? 0) > usage.tokensOut)
      warnings.push(`tokens_reasoning (${input.tokens_reasoning}) exceeds tokens_out (${usage.tokensOut})`);

    return executionRow(
      {
        project_id: projectId,
        started_at: toClickHouseTime(startedAt),
        trace_id: input.trace_id,
        ended_at: toClickHouseTime(endedAt),
        source,
        agent_id: input.agent_id ?? '',
        provider: input.provider ?? '',
        model: input.model ?? '',
        status: input.status ?? 'ok',
        error_message: input.error_message ?? '',
        tokens_in: usage.tokensIn,
        tokens_out: usage.tokensOut,
        tokens_cached_in: usage.cachedIn,
        tokens_cache_write_in: usage.cacheWriteIn,
        tokens_reasoning: input.tokens_reasoning ?? 0,
        latency_ms: latency || Math.max(0, endedAt.getTime() - startedAt.getTime()),
        cost_usd: fromScaled(costNanos, NANOS),
        cost_source: priced.source,
        cost_computed_usd: computedNanos === undefined ? null : fromScaled(computedNanos, NANOS),
        price_id: priced.price?.price_id ?? '',
        usage_warnings: warnings,
        session_id: input.session_id ?? '',
        user_id: input.user_id ?? '',
        tags: input.tags ?? [],
        metadata: input.metadata ?? {},
        span_count: 0,
        api_key_id: apiKeyId,
        ...(input.environment ? { environment: input.environment } : {}),
        ...templateUsageColumns(
          resolved.map((u) => ({
            ...u,
            inputs: u.inputs ?? {},
            role: u.role ?? '',
            source: u.source ?? '',
            message_index: u.message_index ?? -1,
          })),
        ),
        conversation_history: JSON.stringify(messages),
        ...(Object.keys(details).length ? { usage_details: details } : {}),
        ...(Object.keys(pricingContext).length ? { pricing_context: pricingContext } : {}),
        ...(lines.toJson() ? { cost_lines: lines.toJson() } : {}),
      },
      { version: 1, sign: 1, received_at: toClickHouseTime(receivedAt), content_hash: contentHash },
    );
  }

  /** The stored row in the API's shape, without reading it back. */
  function asDetail(row: ExecutionRow) {
    return presentDetail({
      ...row,
      environment: row.environment ?? '',
      tokens_in: String(row.tokens_in),
      tokens_out: String(row.tokens_out),
      latency_ms: String(row.latency_ms),
      tokens_cached_in: String(row.tokens_cached_in),
      tokens_cache_write_in: String(row.tokens_cache_write_in),
      tokens_reasoning: String(row.tokens_reasoning),
      usage_details: row.usage_details ?? {},
      pricing_context: row.pricing_context ?? {},
      cost_lines: row.cost_lines ?? '',
      cost_usd_text: row.cost_usd,
      cost_computed_text: row.cost_computed_usd,
      template_count: row['tu.prompt_id'].length,
      tu_prompt_id: row['tu.prompt_id'],
      tu_version: row['tu.version'],
      tu_version_ref: row['tu.version_ref'],
      tu_role: row['tu.role'],
      tu_source: row['tu.source'],
      tu_message_index: row['tu.message_index'],
      conversation_history: undefined,
    });
  }

  async function recordOnce(
    projectId: string,
    input: ExecutionInput,
    apiKeyId: string,
    source: ExecutionSource,
  ): Promise<{ created: boolean; traceId: string; execution?: ReturnType<typeof presentDetail> }> {
    const contentHash = hashOf(input);
    const existing = await deps.queries.traceHash(projectId, input.trace_id);
    if (existing !== undefined) {
      if (existing === contentHash) return { created: false, traceId: input.trace_id };
      throw conflict(`trace_id ${input.trace_id} already recorded with different content`);
    }
    const row = await buildRow(projectId, input, contentHash, apiKeyId, source);
    const bytes = row.conversation_history.length + row.template_inputs.length + 1024;
    await deps.writer.write([row], bytes);
    deps.onSpendMoved?.(projectId);
    deps.onExecutionsWritten?.(projectId, [input.trace_id]);
    return { created: true, traceId: input.trace_id, execution: asDetail(row) };
  }

  return {
    /**
     * `apiKeyId`: the key of the caller ('' for other credentials), recorded on the execution. It
     * is not part of the content: the same record sent again by another key is a repeat (200),
     * and keeps the key that recorded it first. `source`: what made it (`api` for a record sent
     * to the API; `playground` for the service's own calls there).
     */
    async record(projectId: string, input: ExecutionInput, apiKeyId = '', source: ExecutionSource = 'api') {
      const key = `${projectId}\u0000${input.trace_id}`;
      // Wait for the one in flight; its promise settles only after it left the map.
      for (let other = inFlight.get(key); other; other = inFlight.get(key)) await other;
      const work = recordOnce(projectId, input, apiKeyId, source);
      inFlight.set(
        key,
        work
          .then(
            () => undefined,
            () => undefined,
          )
          .finally(() => inFlight.delete(key)),
      );
      const r = await work;
      const execution = r.execution ?? (await deps.queries.get(projectId, r.traceId, false));
      return { created: r.created, execution: execution! };
    },
  };
}

export type ExecutionRecorder = ReturnType<typeof createExecutionRecorder>;
