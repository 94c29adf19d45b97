// The semantic-convention mapper: one decoded span → what it means (docs/otel-mapping.md).
// Pure: no I/O, no stores, never throws. Trace-level decisions (agent from ancestors or
// service.name, a prompt usage on an agent span applying to the inference spans below it, which
// span's messages make the conversation) belong to trace assembly, which reads these results.
import type { DecodedSpan, MappedSpan, SpanClass } from '../../executions/span.ts';
import { classify } from './classify.ts';
import { SpanCtx } from './context.ts';
import { mapAgent, mapError, mapModel, mapProvidedCost, mapSession, mapTool } from './fields.ts';
import { scanKeys } from './indexed.ts';
import { mapMessages } from './messages.ts';
import { mapPromptUsages } from './prompts.ts';
import { G } from './keys.ts';
import { mapProvider } from './provider.ts';
import { readUsage } from './usage.ts';
import { mapTraceAttributes } from './trace-attributes.ts';

export { normaliseProvider, providerFromHost, providerFromModel } from './provider.ts';
export { normalizeMessages } from './normalize.ts';

/** Why a span that is not an inference span does not count the usage or cost it carries. */
function notCounted(spanClass: SpanClass): string {
  switch (spanClass) {
    case 'agent':
      return 'agent span: usage is counted on its inference children';
    case 'tool':
      return 'tool span: only inference spans count usage';
    default:
      return 'not an inference span: usage is not counted';
  }
}

function mapUnsafe(span: DecodedSpan): MappedSpan {
  const ctx = new SpanCtx(span);
  const scan = scanKeys(ctx);
  const g = scan.groups;
  const { spanClass, operation } = classify(ctx, g);
  const model = g & G.MODEL ? mapModel(ctx) : '';
  const provider = g & G.PROVIDER || model ? mapProvider(ctx, model) : '';

  let usage: MappedSpan['usage'];
  const read = g & G.USAGE ? readUsage(ctx, scan.usageKeys) : undefined;
  if (read) {
    if (spanClass === 'inference') {
      usage = read.usage;
      ctx.map('usage', read.keys.join(', '));
      if (read.conversions.length) ctx.map('usage.conversion', read.conversions.join('; '));
    } else {
      const reason = notCounted(spanClass);
      for (const key of read.keys) ctx.ignore(key, reason);
    }
  }
  const providedCostUsd = g & G.COST ? mapProvidedCost(ctx, spanClass, notCounted(spanClass)) : undefined;
  const tool = mapTool(ctx, spanClass);
  const hasEvents = Array.isArray(span.events) && span.events.length > 0;
  const messages = g & G.MESSAGES || hasEvents ? mapMessages(ctx, scan, spanClass) : undefined;
  const attrs = g & G.TRACE ? mapTraceAttributes(ctx, scan.metadataKeys ?? []) : { userId: '', tags: [], metadata: {} };

  const mapped: MappedSpan = {
    spanClass,
    operation,
    provider,
    model,
    agentId: g & G.AGENT ? mapAgent(ctx) : '',
    sessionId: g & G.SESSION ? mapSession(ctx) : '',
    ...attrs,
    toolName: tool.toolName,
    toolCallId: tool.toolCallId,
    promptUsages: g & G.PROMPT ? mapPromptUsages(ctx, scan) : [],
    inputMessages: messages?.input ?? [],
    outputMessages: messages?.output ?? [],
    errorMessage: mapError(ctx),
    explain: ctx.explain,
  };
  if (usage) mapped.usage = usage;
  if (providedCostUsd !== undefined) mapped.providedCostUsd = providedCostUsd;
  if (tool.toolArguments !== undefined) mapped.toolArguments = tool.toolArguments;
  if (tool.toolResult !== undefined) mapped.toolResult = tool.toolResult;
  return mapped;
}

/**
 * Maps one span. Never throws: a malformed value is skipped and listed in explain.ignored, and
 * should anything unforeseen fail, the span is still returned, as `other`, with the failure noted.
 */
export function mapSpan(span: DecodedSpan): MappedSpan {
  try {
    return mapUnsafe(span);
  } catch (err) {
    return {
      spanClass: 'other',
      operation: '',
      provider: '',
      model: '',
      agentId: '',
      sessionId: '',
      userId: '',
      tags: [],
      metadata: {},
      toolName: '',
      toolCallId: '',
      promptUsages: [],
      inputMessages: [],
      outputMessages: [],
      errorMessage: span?.statusCode === 2 && typeof span.statusMessage === 'string' ? span.statusMessage : '',
      explain: { mapped: {}, ignored: [{ key: '*', reason: `mapping failed: ${err instanceof Error ? err.message : String(err)}` }] },
    };
  }
}
