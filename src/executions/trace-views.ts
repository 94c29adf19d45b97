// The hierarchy and the timeline of an execution, whatever its source: a direct record shows one
// synthetic root and its conversation_history; a traced one its spans (each span priced the way
// assembly priced it, with whether its usage counts) and the conversation merged from them.
import type { PriceResolver } from '../pricing/prices.ts';
import { computeCost } from '../pricing/cost.ts';
import { countedSpans } from '../ingest/assembly/summarize.ts';
import type { NormalizedMessage } from '../ingest/otlp/span.ts';
import { mergeConversation, type LlmCall, type ToolSpan } from './conversation.ts';
import { spanTree, syntheticRoot, type TreeSpan } from './hierarchy.ts';
import { timelineFromMessages } from './timeline.ts';
import type { ExecutionQueries } from './queries.ts';
import type { FullSpan, SpanQueries } from './spans.ts';
import { mergeLogEvents } from '../ingest/assembly/log-messages.ts';

/** A traced execution's spans, with the GenAI events sent as logs merged into their messages. */
async function spansOf(spans: SpanQueries, projectId: string, traceId: string): Promise<FullSpan[]> {
  const [list, events] = await Promise.all([spans.ofTrace(projectId, traceId), spans.logEventsOf(projectId, traceId)]);
  return mergeLogEvents(list, events);
}

function json(s: string, fallback: unknown): unknown {
  if (!s) return fallback;
  try {
    return JSON.parse(s);
  } catch {
    return fallback;
  }
}

export function createTraceViews(deps: { queries: ExecutionQueries; spans: SpanQueries; prices: PriceResolver }) {
  async function treeSpan(projectId: string, s: FullSpan, counted: Set<string>): Promise<TreeSpan> {
    const hasUsage = Number(s.has_usage) === 1;
    let cost: number | null = null;
    let costSource: TreeSpan['cost_source'] = null;
    if (s.cost_provided) {
      cost = Number(s.cost_provided);
      costSource = 'provided';
    } else if (hasUsage) {
      const usage = { tokensIn: Number(s.tokens_in), tokensOut: Number(s.tokens_out), cachedIn: Number(s.tokens_cached_in), cacheWriteIn: Number(s.tokens_cache_write_in) };
      const price = await deps.prices.resolve(projectId, s.provider, s.model, new Date(Number(BigInt(s.start_time_ns) / 1_000_000n)), usage.tokensIn);
      cost = price ? Number(computeCost(usage, price).costUsd) : 0;
      costSource = price ? 'computed' : 'unpriced';
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
      const spans = e.source === 'otlp' ? await spansOf(deps.spans, projectId, traceId) : [];
      // A direct record, or a traced one whose raw spans retention has removed: one synthetic root.
      if (spans.length === 0) return { trace_id: e.trace_id, spans: [syntheticRoot(e)] };
      const counted = countedSpans(spans);
      const tree = await Promise.all(spans.map((s) => treeSpan(projectId, s, counted)));
      return { trace_id: e.trace_id, spans: spanTree(tree) };
    },

    async timeline(projectId: string, traceId: string, compactTools: boolean) {
      const e = await deps.queries.get(projectId, traceId, true);
      if (!e) return undefined;
      const spans = e.source === 'otlp' ? await spansOf(deps.spans, projectId, traceId) : [];
      if (spans.length === 0) return { trace_id: e.trace_id, events: timelineFromMessages((e.conversation_history ?? []) as never, compactTools) };
      const calls: LlmCall[] = [];
      const tools: ToolSpan[] = [];
      for (const s of spans) {
        const m = json(s.messages, {}) as { input?: NormalizedMessage[]; output?: NormalizedMessage[]; tool_arguments?: unknown; tool_result?: unknown };
        if (s.span_class === 'inference' && (m.input?.length || m.output?.length)) {
          calls.push({ spanId: s.span_id, startNs: BigInt(s.start_time_ns), endNs: BigInt(s.end_time_ns), input: m.input ?? [], output: m.output ?? [] });
        } else if (s.span_class === 'tool') {
          tools.push({
            spanId: s.span_id,
            callId: s.tool_call_id,
            name: s.tool_name,
            startNs: BigInt(s.start_time_ns),
            endNs: BigInt(s.end_time_ns),
            isError: s.status_code === 'ERROR',
            arguments: m.tool_arguments,
            result: m.tool_result,
          });
        }
      }
      return { trace_id: e.trace_id, events: timelineFromMessages(mergeConversation(calls, tools) as never, compactTools) };
    },
  };
}

export type TraceViews = ReturnType<typeof createTraceViews>;
