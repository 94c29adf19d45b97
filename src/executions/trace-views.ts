// The hierarchy and the timeline of an execution, whatever its source: a direct record shows one
// synthetic root and its conversation_history; a traced one its spans (each span priced the way
// assembly priced it, with whether its usage counts) and the conversation merged from them.
import { contextOf, detailsOf } from './cost-lines.ts';
import type { PriceResolver } from '../pricing/prices.ts';
import { mergeConversation } from './conversation.ts';
import { spanTree, syntheticRoot, type TreeSpan } from './hierarchy.ts';
import { timelineFromMessages } from './timeline.ts';
import type { ExecutionDetail } from './execution-detail-repository.ts';
import type { FullSpan } from './span-rows.ts';
import { priceCall } from './pricing.ts';
import { callsAndTools, countedSpans } from './span-builders.ts';

export interface TraceViewDeps {
  queries: Pick<ExecutionDetail, 'get'>;
  /** A traced execution's spans, with the GenAI events sent as logs merged into their messages (ingest/assembly/log-messages.ts). */
  spansOf(projectId: string, traceId: string): Promise<FullSpan[]>;
  prices: PriceResolver;
}

function json(s: string, fallback: unknown): unknown {
  if (!s) return fallback;
  try {
    return JSON.parse(s);
  } catch {
    return fallback;
  }
}

export function createTraceViews(deps: TraceViewDeps) {
  async function treeSpan(projectId: string, s: FullSpan, counted: Set<string>): Promise<TreeSpan> {
    const hasUsage = Number(s.has_usage) === 1;
    let cost: number | null = null;
    let costSource: TreeSpan['cost_source'] = null;
    if (s.cost_provided || hasUsage) {
      const usage = {
        tokensIn: Number(s.tokens_in),
        tokensOut: Number(s.tokens_out),
        cachedIn: Number(s.tokens_cached_in),
        cacheWriteIn: Number(s.tokens_cache_write_in),
        reasoning: Number(s.tokens_reasoning),
        details: detailsOf(s.usage_details),
      };
      const at = new Date(Number(BigInt(s.start_time_ns) / 1_000_000n));
      const priced = await priceCall(deps.prices, projectId, {
        provider: s.provider,
        model: s.model,
        at,
        usage,
        provided: s.cost_provided,
        context: contextOf(s.pricing_context),
      });
      // Exact until here; the API shows a span's cost as a JSON number (HierarchySpan.cost_usd).
      cost = Number(priced.costUsd);
      costSource = priced.source;
    }
    return {
      span_id: s.span_id,
      parent_span_id: s.parent_span_id,
      name: s.name,
      kind: s.kind,
      start_time_ns: s.start_time_ns,
      end_time_ns: s.end_time_ns,
      status_code: s.status_code,
      status_message: s.status_message,
      span_class: s.span_class,
      operation: s.operation,
      model: s.model,
      provider: s.provider,
      tokens_in: Number(s.tokens_in),
      tokens_out: Number(s.tokens_out),
      has_usage: hasUsage,
      counted: counted.has(s.span_id) && hasUsage,
      cost_usd: cost,
      cost_source: costSource,
      attributes: json(s.attributes, {}),
      resource: json(s.resource, {}),
      events: json(s.events, []) as unknown[],
      links: json(s.links, []) as unknown[],
      messages: json(s.messages, null),
      truncated: s.truncated,
    };
  }

  return {
    async hierarchy(projectId: string, traceId: string) {
      const e = await deps.queries.get(projectId, traceId, false);
      if (!e) return undefined;
      const spans = e.source === 'otlp' ? await deps.spansOf(projectId, traceId) : [];
      // A direct record, or a traced one whose raw spans retention has removed: one synthetic root.
      if (spans.length === 0) return { trace_id: e.trace_id, spans: [syntheticRoot(e)] };
      const counted = countedSpans(spans);
      const tree = await Promise.all(spans.map((s) => treeSpan(projectId, s, counted)));
      return { trace_id: e.trace_id, spans: spanTree(tree) };
    },

    async timeline(projectId: string, traceId: string, compactTools: boolean) {
      const e = await deps.queries.get(projectId, traceId, true);
      if (!e) return undefined;
      const spans = e.source === 'otlp' ? await deps.spansOf(projectId, traceId) : [];
      if (spans.length === 0)
        return { trace_id: e.trace_id, events: timelineFromMessages((e.conversation_history ?? []) as never, compactTools) };
      const { calls, tools } = callsAndTools(spans);
      return { trace_id: e.trace_id, events: timelineFromMessages(mergeConversation(calls, tools) as never, compactTools) };
    },
  };
}

export type TraceViews = ReturnType<typeof createTraceViews>;
