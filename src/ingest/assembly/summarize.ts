// The spans of one trace → its execution row (architecture.md, invariants 2, 3 and 5). Usage and
// cost come from inference spans only, and from an inference span only when none of its
// descendants carries usage (an outer SDK span repeating its children's totals never counts).
// The row has the shape of a direct record's (executions/record.ts), with source "otlp".
import crypto from 'node:crypto';
import type { NormalizedMessage, SpanPromptUsage } from '../otlp/span.ts';
import type { SpanRow } from '../span-rows.ts';
import type { PriceResolver } from '../../pricing/prices.ts';
import { computeCost } from '../../pricing/cost.ts';
import { fromScaled, NANOS, toScaled } from '../../pricing/decimal.ts';
import { toClickHouseTime } from '../../time.ts';
import { canonicalJson } from '../../prompts/template.ts';
import { mergeConversation, plainConversation, type LlmCall, type ToolSpan } from '../../executions/conversation.ts';
import type { Template } from '../../prompts/template.ts';
import { executionAttributes } from './execution-attributes.ts';
import { locateTemplate } from './template-location.ts';

type ReadBackColumns = 'trace_id' | 'span_id' | 'parent_span_id' | 'start_time_ns' | 'end_time_ns' | 'received_at' | 'name' | 'status_code'
  | 'status_message' | 'service_name' | 'span_class' | 'operation' | 'provider' | 'model' | 'agent_id' | 'session_id' | 'user_id' | 'tags' | 'metadata' | 'tool_name'
  | 'tool_call_id' | 'error_message' | 'prompt_usages' | 'messages';

/** The columns of `spans` that make a StoredSpan. */
export const STORED_SPAN_COLUMNS: ReadonlySet<string> = new Set([
  'trace_id', 'span_id', 'parent_span_id', 'start_time_ns', 'end_time_ns', 'received_at', 'name', 'status_code', 'status_message', 'service_name',
  'span_class', 'operation', 'provider', 'model', 'agent_id', 'session_id', 'user_id', 'tags', 'metadata', 'has_usage', 'tokens_in', 'tokens_out',
  'tokens_cached_in', 'tokens_cache_write_in', 'tokens_reasoning', 'cost_provided', 'tool_name', 'tool_call_id', 'error_message', 'prompt_usages', 'messages',
]);

/** The columns of `spans` that assembly reads (one row per span, duplicates removed): 64-bit counts and decimals come back as text. */
export type StoredSpan = Pick<SpanRow, ReadBackColumns> & {
  has_usage: number | string;
  tokens_in: string;
  tokens_out: string;
  tokens_cached_in: string;
  tokens_cache_write_in: string;
  tokens_reasoning: string;
  cost_provided: string | null;
};

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

export interface ParsedMessages {
  input?: NormalizedMessage[];
  output?: NormalizedMessage[];
  tool_arguments?: unknown;
  tool_result?: unknown;
}

const big = (s: string) => BigInt(s || '0');
const MAX_COST_NANOS = 10n ** 18n - 1n;
const nsToDate = (ns: bigint) => new Date(Number(ns / 1_000_000n));

function parseMessages(s: string): ParsedMessages {
  if (!s) return {};
  try {
    return JSON.parse(s) as ParsedMessages;
  } catch {
    return {};
  }
}

/** Spans with usage that count: inference spans none of whose descendants carries usage. */
export function countedSpans(spans: readonly StoredSpan[]): Set<string> {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const hasUsageBelow = new Set<string>();
  for (const s of spans) {
    if (s.span_class !== 'inference' || Number(s.has_usage) !== 1) continue;
    // Walk up, marking every ancestor; stop at one already marked (its ancestors are too), so the
    // whole pass is linear in the number of spans whatever the depth. `seen` guards cycles.
    const seen = new Set<string>([s.span_id]);
    for (let p = byId.get(s.parent_span_id); p && !seen.has(p.span_id) && !hasUsageBelow.has(p.span_id); p = byId.get(p.parent_span_id)) {
      seen.add(p.span_id);
      hasUsageBelow.add(p.span_id);
    }
  }
  return new Set(spans.filter((s) => s.span_class === 'inference' && !hasUsageBelow.has(s.span_id)).map((s) => s.span_id));
}

/** The agent of the execution: named on the root, else on the first agent span, else on an inference span or its ancestors, else the service. */
function agentOf(spans: readonly StoredSpan[], root: StoredSpan | undefined): string {
  if (root?.agent_id) return root.agent_id;
  const byStart = [...spans].sort((a, b) => (big(a.start_time_ns) < big(b.start_time_ns) ? -1 : 1));
  const agentSpan = byStart.find((s) => s.span_class === 'agent' && s.agent_id);
  if (agentSpan) return agentSpan.agent_id;
  const named = byStart.find((s) => s.agent_id);
  if (named) return named.agent_id;
  return (root ?? byStart[0])?.service_name ?? '';
}

export async function summarizeTrace(projectId: string, spans: readonly StoredSpan[], deps: SummarizeDeps) {
  const root = spans.find((s) => !s.parent_span_id);
  const starts = spans.map((s) => big(s.start_time_ns));
  const ends = spans.map((s) => big(s.end_time_ns));
  const startNs = root ? big(root.start_time_ns) : starts.reduce((a, b) => (b < a ? b : a));
  const endNs = [root ? big(root.end_time_ns) : 0n, ...ends].reduce((a, b) => (b > a ? b : a));
  const startedAt = nsToDate(startNs);
  const endedAt = nsToDate(endNs < startNs ? startNs : endNs);

  const counted = countedSpans(spans);
  const warnings: string[] = [];
  let tokensIn = 0, tokensOut = 0, cachedIn = 0, cacheWriteIn = 0, reasoning = 0;
  let costNanos = 0n, computedNanos = 0n;
  let anyProvided = false, anyComputed = false, allComputed = true;
  let main: { span: StoredSpan; tokens: number; priceId: string } | undefined;
  for (const s of spans) {
    if (!counted.has(s.span_id)) continue;
    const usage = { tokensIn: Number(s.tokens_in), tokensOut: Number(s.tokens_out), cachedIn: Number(s.tokens_cached_in), cacheWriteIn: Number(s.tokens_cache_write_in) };
    tokensIn += usage.tokensIn;
    tokensOut += usage.tokensOut;
    cachedIn += usage.cachedIn;
    cacheWriteIn += usage.cacheWriteIn;
    reasoning += Number(s.tokens_reasoning);
    const price = await deps.prices.resolve(projectId, s.provider, s.model, nsToDate(big(s.start_time_ns)), usage.tokensIn);
    const computed = price ? computeCost(usage, price) : undefined;
    if (computed) {
      computedNanos += computed.costNanos;
      anyComputed = true;
      for (const w of computed.warnings) warnings.push(`span ${s.span_id}: ${w}`);
    } else {
      allComputed = false;
    }
    if (s.cost_provided !== null && s.cost_provided !== undefined && s.cost_provided !== '') {
      anyProvided = true;
      costNanos += toScaled(s.cost_provided, NANOS);
    } else if (computed) {
      costNanos += computed.costNanos;
    } else if (usage.tokensIn + usage.tokensOut > 0 || s.model) {
      warnings.push(`span ${s.span_id}: no price for model ${s.model || '(none)'}${s.provider ? ` (${s.provider})` : ''}; its cost is not counted`);
    }
    const tokens = usage.tokensIn + usage.tokensOut;
    if (!main || tokens > main.tokens) main = { span: s, tokens, priceId: price?.price_id ?? '' };
  }
  const costSource = anyProvided ? 'provided' : anyComputed ? 'computed' : 'unpriced';
  // Decimal(18, 9) holds up to 999,999,999.999999999 USD per execution; a sum beyond is capped, and said.
  const cap = (n: bigint, what: string) => {
    if (n <= MAX_COST_NANOS) return n;
    warnings.push(`${what} exceeds ${fromScaled(MAX_COST_NANOS, NANOS)} USD; capped`);
    return MAX_COST_NANOS;
  };
  costNanos = cap(costNanos, 'cost_usd');
  computedNanos = cap(computedNanos, 'cost_computed_usd');
  const capTokens = (n: number) => Math.min(n, Number.MAX_SAFE_INTEGER);
  tokensIn = capTokens(tokensIn);
  tokensOut = capTokens(tokensOut);
  cachedIn = capTokens(cachedIn);
  cacheWriteIn = capTokens(cacheWriteIn);
  reasoning = capTokens(reasoning);

  // Template usages named on any span, resolved like direct records'; unknown ones are reported.
  const usages: ResolvedUsage[] = [];
  const seenUsage = new Set<string>();
  for (const s of spans) {
    if (!s.prompt_usages) continue;
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

  const calls: LlmCall[] = [];
  const tools: ToolSpan[] = [];
  for (const s of spans) {
    if (!s.messages) continue;
    const m = parseMessages(s.messages);
    if (s.span_class === 'inference' && (m.input?.length || m.output?.length)) {
      calls.push({ spanId: s.span_id, startNs: big(s.start_time_ns), endNs: big(s.end_time_ns), input: m.input ?? [], output: m.output ?? [] });
    }
  }
  for (const s of spans) {
    if (s.span_class !== 'tool') continue;
    const m = parseMessages(s.messages);
    tools.push({ spanId: s.span_id, callId: s.tool_call_id, name: s.tool_name, startNs: big(s.start_time_ns), endNs: big(s.end_time_ns), isError: s.status_code === 'ERROR', arguments: m.tool_arguments, result: m.tool_result });
  }
  const conversation = plainConversation(mergeConversation(calls, tools));
  const locations = await Promise.all(
    usages.map(async (u) => {
      const template = await deps.promptTemplate?.(projectId, u.prompt_id, u.version);
      return template === undefined ? undefined : locateTemplate(template, u.inputs, conversation);
    }),
  );

  const errorSpan = spans.find((s) => s.status_code === 'ERROR');
  const attributes = executionAttributes(spans);
  const row = {
    project_id: projectId,
    started_at: toClickHouseTime(startedAt),
    trace_id: spans[0]!.trace_id,
    ended_at: toClickHouseTime(endedAt),
    source: 'otlp',
    agent_id: agentOf(spans, root),
    provider: main?.span.provider ?? '',
    model: main?.span.model ?? '',
    status: errorSpan ? 'error' : 'ok',
    error_message: errorSpan ? errorSpan.error_message || errorSpan.status_message : '',
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
    'tu.prompt_id': usages.map((u) => u.prompt_id),
    'tu.version': usages.map((u) => u.version),
    'tu.version_ref': usages.map((u) => u.version_ref),
    'tu.role': locations.map((l) => l?.role ?? ''),
    'tu.source': usages.map(() => 'otlp'),
    'tu.message_index': locations.map((l) => l?.messageIndex ?? -1),
    template_inputs: JSON.stringify(usages.map((u) => u.inputs)),
    conversation_history: JSON.stringify(conversation),
  };
  // What the execution says, whatever the batches and retries that carried its spans: a
  // re-assembly with the same content writes nothing.
  const contentHash = crypto.createHash('sha256').update(canonicalJson(row)).digest('hex');
  return { ...row, content_hash: contentHash, hasRoot: root !== undefined };
}

export type TraceSummary = Awaited<ReturnType<typeof summarizeTrace>>;
