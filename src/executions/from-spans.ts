// The spans of one trace → its execution row (docs/architecture.md, invariants 2, 3 and 5). Usage and
// cost come from inference spans only, and from an inference span only when none of its
// descendants carries usage (an outer SDK span repeating its children's totals never counts).
// The row is built like a direct record's (row.ts), with source "otlp"; each counted span is
// priced by the one pricing rule (pricing.ts).
import type { SpanPromptUsage } from './span.ts';
import type { StoredSpan } from './span-rows.ts';
import type { PriceResolver } from '../pricing/prices.ts';
import { fromScaled, NANOS } from '../decimal.ts';
import { toClickHouseTime } from '../time.ts';
import { storedConversation } from './conversation.ts';
import type { Template } from '../prompts/template.ts';
import { executionAttributes } from './execution-attributes.ts';
import { locateTemplate } from './template-location.ts';
import { capCost, priceCall } from './pricing.ts';
import { callsAndTools, countedSpans } from './span-builders.ts';
import { contentHash, templateUsageColumns, type ExecutionContent } from './row.ts';
import { errorReason } from './error-reason.ts';
import { addDetails, contextOf, CostLines, detailsOf } from './cost-lines.ts';

export interface ResolvedUsage {
  prompt_id: string;
  version: number;
  version_ref: string;
  inputs: Record<string, unknown>;
}

export interface SummarizeDeps {
  prices: PriceResolver;
  /** The concrete version of a prompt reference, or undefined when the prompt or version does not exist. */
  resolvePrompt(projectId: string, promptId: string, versionRef: string): Promise<number | undefined>;
  /** The template of a prompt version, to find where the usage sits in the conversation (message_index); undefined when unknown. */
  promptTemplate?(projectId: string, promptId: string, version: number): Promise<Template | undefined>;
}

const big = (s: string) => BigInt(s || '0');
/**
 * Nanosecond timestamps as stored (decimal text of a UInt64, '' for 0) compared without BigInt:
 * a shorter number is smaller, and numbers of one length compare as text.
 */
const digits = (s: string) => s || '0';
function nsBefore(a: string, b: string): boolean {
  const x = digits(a);
  const y = digits(b);
  return x.length !== y.length ? x.length < y.length : x < y;
}
const nsToDate = (ns: bigint) => new Date(Number(ns / 1_000_000n));

/**
 * The agent of the execution: named on the root, else on the first agent span, else on an
 * inference span or its ancestors, else the service.
 */
function agentOf(spans: readonly StoredSpan[], root: StoredSpan | undefined): string {
  if (root?.agent_id) return root.agent_id;
  const byStart = [...spans].sort((a, b) => (nsBefore(a.start_time_ns, b.start_time_ns) ? -1 : 1));
  const agentSpan = byStart.find((s) => s.span_class === 'agent' && s.agent_id);
  if (agentSpan) return agentSpan.agent_id;
  const named = byStart.find((s) => s.agent_id);
  if (named) return named.agent_id;
  return (root ?? byStart[0])?.service_name ?? '';
}

/**
 * What the execution is attributed to (its API key, its environment): the root span's, else that
 * of the earliest span (then lowest span id) that carries one, so every assembly of the same spans
 * gives the same value whatever the order they were read in; '' when no span came with one.
 */
function rootOrFirst(spans: readonly StoredSpan[], root: StoredSpan | undefined, field: 'api_key_id' | 'environment'): string {
  if (root?.[field]) return root[field];
  let first: StoredSpan | undefined;
  for (const s of spans) {
    if (!s[field]) continue;
    const earlier =
      !first ||
      nsBefore(s.start_time_ns, first.start_time_ns) ||
      (digits(s.start_time_ns) === digits(first.start_time_ns) && s.span_id < first.span_id);
    if (earlier) first = s;
  }
  return first?.[field] ?? '';
}

export async function summarizeTrace(projectId: string, spans: readonly StoredSpan[], deps: SummarizeDeps) {
  const root = spans.find((s) => !s.parent_span_id);
  let first = spans[0]!.start_time_ns;
  let last = root ? root.end_time_ns : '';
  for (const s of spans) {
    if (nsBefore(s.start_time_ns, first)) first = s.start_time_ns;
    if (nsBefore(last, s.end_time_ns)) last = s.end_time_ns;
  }
  const startNs = big(root ? root.start_time_ns : first);
  const endNs = big(last);
  const startedAt = nsToDate(startNs);
  const endedAt = nsToDate(endNs < startNs ? startNs : endNs);

  const counted = countedSpans(spans);
  const warnings: string[] = [];
  let tokensIn = 0,
    tokensOut = 0,
    cachedIn = 0,
    cacheWriteIn = 0,
    reasoning = 0;
  let costNanos = 0n,
    computedNanos = 0n;
  let anyProvided = false,
    anyComputed = false,
    allComputed = true;
  let main: { span: StoredSpan; tokens: number; priceId: string } | undefined;
  const lines = new CostLines();
  const details: Record<string, number> = {};
  for (const s of spans) {
    if (!counted.has(s.span_id)) continue;
    const usage = {
      tokensIn: Number(s.tokens_in),
      tokensOut: Number(s.tokens_out),
      cachedIn: Number(s.tokens_cached_in),
      cacheWriteIn: Number(s.tokens_cache_write_in),
      reasoning: Number(s.tokens_reasoning),
      details: detailsOf(s.usage_details),
    };
    addDetails(details, usage.details);
    tokensIn += usage.tokensIn;
    tokensOut += usage.tokensOut;
    cachedIn += usage.cachedIn;
    cacheWriteIn += usage.cacheWriteIn;
    reasoning += Number(s.tokens_reasoning);
    const priced = await priceCall(deps.prices, projectId, {
      provider: s.provider,
      model: s.model,
      at: nsToDate(big(s.start_time_ns)),
      usage,
      provided: s.cost_provided,
      context: contextOf(s.pricing_context),
    });
    lines.add(priced);
    const { computed, price } = priced;
    if (computed) {
      computedNanos += computed.costNanos;
      anyComputed = true;
      for (const w of computed.warnings) warnings.push(`span ${s.span_id}: ${w}`);
    } else {
      allComputed = false;
    }
    costNanos += priced.costNanos;
    if (priced.source === 'provided') anyProvided = true;
    else if (priced.source === 'unpriced' && (usage.tokensIn + usage.tokensOut > 0 || s.model)) {
      warnings.push(
        `span ${s.span_id}: no price for model ${s.model || '(none)'}${s.provider ? ` (${s.provider})` : ''}; its cost is not counted`,
      );
    }
    const tokens = usage.tokensIn + usage.tokensOut;
    if (!main || tokens > main.tokens) main = { span: s, tokens, priceId: price?.price_id ?? '' };
  }
  const costSource = anyProvided ? 'provided' : anyComputed ? 'computed' : 'unpriced';
  // A sum beyond what an execution holds is capped, and said.
  costNanos = capCost(costNanos, 'cost_usd', warnings);
  computedNanos = capCost(computedNanos, 'cost_computed_usd', warnings);
  const capTokens = (n: number) => Math.min(n, Number.MAX_SAFE_INTEGER);
  tokensIn = capTokens(tokensIn);
  tokensOut = capTokens(tokensOut);
  cachedIn = capTokens(cachedIn);
  cacheWriteIn = capTokens(cacheWriteIn);
  reasoning = capTokens(reasoning);

  // Template usages named on any span, resolved like direct records'; unknown ones are reported.
  const usages: ResolvedUsage[] = [];
  const seenUsage = new Set<string>();
  const seenLists = new Set<string>(); // spans of a trace mostly repeat the same list
  for (const s of spans) {
    if (!s.prompt_usages || seenLists.has(s.prompt_usages)) continue;
    seenLists.add(s.prompt_usages);
    let list: SpanPromptUsage[] = [];
    try {
      list = JSON.parse(s.prompt_usages) as SpanPromptUsage[];
    } catch {
      continue;
    }
    for (const u of list) {
      const ref = u.versionRef ?? 'latest';
      const key = `${u.promptId}\u0000${ref}`;
      if (seenUsage.has(key)) continue;
      seenUsage.add(key);
      const version = await deps.resolvePrompt(projectId, u.promptId, ref);
      if (version === undefined) {
        warnings.push(`span ${s.span_id}: prompt ${u.promptId} version ${ref} does not exist; template usage not recorded`);
        continue;
      }
      usages.push({ prompt_id: u.promptId, version, version_ref: ref, inputs: u.inputs ?? {} });
    }
  }

  const { calls, tools } = callsAndTools(spans);
  const conversation = storedConversation(calls, tools);
  const locations = await Promise.all(
    usages.map(async (u) => {
      const template = await deps.promptTemplate?.(projectId, u.prompt_id, u.version);
      return template === undefined ? undefined : locateTemplate(template, u.inputs, conversation);
    }),
  );

  const failed = spans.some((s) => s.status_code === 'ERROR');
  const attributes = executionAttributes(spans);
  const environment = rootOrFirst(spans, root, 'environment');
  const costLines = lines.toJson();
  const row: ExecutionContent = {
    project_id: projectId,
    started_at: toClickHouseTime(startedAt),
    trace_id: spans[0]!.trace_id,
    ended_at: toClickHouseTime(endedAt),
    source: 'otlp',
    agent_id: agentOf(spans, root),
    provider: main?.span.provider ?? '',
    model: main?.span.model ?? '',
    status: failed ? 'error' : 'ok',
    error_message: failed ? errorReason(spans) : '',
    tokens_in: tokensIn,
    tokens_out: tokensOut,
    tokens_cached_in: cachedIn,
    tokens_cache_write_in: cacheWriteIn,
    tokens_reasoning: reasoning,
    latency_ms: Math.max(0, endedAt.getTime() - startedAt.getTime()),
    cost_usd: fromScaled(costNanos, NANOS),
    cost_source: costSource,
    cost_computed_usd: anyComputed && (costSource === 'computed' || allComputed) ? fromScaled(computedNanos, NANOS) : null,
    price_id: main?.priceId ?? '',
    usage_warnings: warnings,
    session_id: attributes.session_id,
    user_id: attributes.user_id,
    tags: attributes.tags,
    metadata: attributes.metadata,
    span_count: spans.length,
    api_key_id: rootOrFirst(spans, root, 'api_key_id'),
    ...(environment ? { environment } : {}),
    ...templateUsageColumns(
      usages.map((u, i) => ({ ...u, role: locations[i]?.role ?? '', source: 'otlp', message_index: locations[i]?.messageIndex ?? -1 })),
    ),
    conversation_history: JSON.stringify(conversation),
    // Absent when empty, so the content hash of an execution without them stays what it was.
    ...(Object.keys(details).length ? { usage_details: details } : {}),
    ...(main && Object.keys(main.span.pricing_context ?? {}).length ? { pricing_context: main.span.pricing_context } : {}),
    ...(costLines ? { cost_lines: costLines } : {}),
  };
  // What the execution says, whatever the batches and retries that carried its spans: a
  // re-assembly with the same content writes nothing.
  return { row, contentHash: contentHash(row), hasRoot: root !== undefined };
}

export type TraceSummary = Awaited<ReturnType<typeof summarizeTrace>>;
