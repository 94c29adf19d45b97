// The semantic-convention mapper: one decoded span → what it means (docs/otel-mapping.md).
// Pure: no I/O, no stores, never throws. Trace-level decisions (agent from ancestors or
// service.name, a prompt usage on an agent span applying to the inference spans below it, which
// span's messages make the conversation) belong to trace assembly, which reads these results.
import type { DecodedSpan, MappedSpan, SpanClass } from '../../executions/span.ts';
import { classify } from './classify.ts';
import { SpanCtx } from './context.ts';
import { mapAgent, mapError, mapModel, mapProvidedCost, mapSession, mapTool } from './fields.ts';
import { scanKeys, type KeyScan } from './indexed.ts';
import { mapMessages } from './messages.ts';
import { mapPromptUsages } from './prompts.ts';
import { G } from './keys.ts';
import { mapProvider } from './provider.ts';
import { attributeParts, fillParts, isUsageCount, resolveUsage, type UsageResult } from './usage.ts';
import { adkUsageParts } from './dialects/adk.ts';
import { genkitModel, genkitUsageParts } from './dialects/genkit.ts';
import { LF_USAGE, langfuseUsageParts } from './dialects/langfuse.ts';
import { providerMetadataParts } from './dialects/vercel.ts';
import { explainUnused } from './unused.ts';
import { mapPricingContext, mapUsageDetails } from './usage-details.ts';
import { mapTraceAttributes } from './trace-attributes.ts';
import { mapDatasetLink } from './dataset-links.ts';

export { normaliseProvider, providerFromHost, providerFromModel } from './provider.ts';
export { normalizeMessages } from './normalize.ts';

export interface MapOptions {
  /** Also list, in explain.ignored, every attribute of a known namespace that was not used (for ?explain=true only: it costs a pass over the keys). */
  explain?: boolean;
}

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

/** The span's usage: Langfuse usage_details when it holds counts, else the attributes with the dialects' JSON counts filling the gaps. */
function spanUsage(ctx: SpanCtx, scan: KeyScan): UsageResult | undefined {
  const g = scan.groups;
  const langfuse = g & G.LANGFUSE ? langfuseUsageParts(ctx) : undefined;
  if (langfuse) {
    for (const key of scan.usageKeys) if (isUsageCount(key)) ctx.ignore(key, 'superseded by langfuse.observation.usage_details');
    return resolveUsage(ctx, langfuse);
  }
  const parts = attributeParts(ctx, scan.usageKeys);
  if (g & G.VERCEL_METADATA) fillParts(parts, providerMetadataParts(ctx));
  if (g & G.ADK) fillParts(parts, adkUsageParts(ctx));
  if (g & G.GENKIT) fillParts(parts, genkitUsageParts(ctx));
  return resolveUsage(ctx, parts);
}

function mapUnsafe(span: DecodedSpan, opts: MapOptions): MappedSpan {
  const ctx = new SpanCtx(span);
  const scan = scanKeys(ctx);
  const g = scan.groups;
  const usageCounts = g & G.USAGE ? scan.usageKeys.some(isUsageCount) || (g & G.LANGFUSE && ctx.has(LF_USAGE)) : false;
  const { spanClass, operation } = classify(ctx, g, Boolean(usageCounts));
  let model = g & G.MODEL ? mapModel(ctx) : '';
  let hint: { value: string; source: string } | undefined;
  if (!model && g & G.GENKIT) {
    const gk = genkitModel(ctx);
    if (gk) {
      model = gk.model;
      ctx.map('model', gk.plugin ? 'genkit:name (less its plugin prefix)' : 'genkit:name');
      if (gk.plugin) hint = { value: gk.plugin, source: 'genkit:name plugin' };
    }
  }
  const provider = g & G.PROVIDER || model ? mapProvider(ctx, model, hint) : '';

  let usage: MappedSpan['usage'];
  let usageDetails: MappedSpan['usageDetails'];
  let pricingContext: MappedSpan['pricingContext'];
  const read = g & G.USAGE ? spanUsage(ctx, scan) : undefined;
  if (read) {
    if (spanClass === 'inference') {
      usage = read.usage;
      ctx.map('usage', read.keys.join(', '));
      if (read.conversions.length) ctx.map('usage.conversion', read.conversions.join('; '));
      usageDetails = mapUsageDetails(ctx);
      pricingContext = mapPricingContext(ctx);
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
  if (opts.explain) explainUnused(ctx);
  if (usage) mapped.usage = usage;
  if (usageDetails) mapped.usageDetails = usageDetails;
  if (pricingContext) mapped.pricingContext = pricingContext;
  if (providedCostUsd !== undefined) mapped.providedCostUsd = providedCostUsd;
  if (tool.toolArguments !== undefined) mapped.toolArguments = tool.toolArguments;
  if (tool.toolResult !== undefined) mapped.toolResult = tool.toolResult;
  if (g & G.DATASET) {
    const link = mapDatasetLink(ctx);
    if (link) mapped.datasetLink = link;
  }
  return mapped;
}

/**
 * Maps one span. Never throws: a malformed value is skipped and listed in explain.ignored, and
 * should anything unforeseen fail, the span is still returned, as `other`, with the failure noted.
 */
export function mapSpan(span: DecodedSpan, opts: MapOptions = {}): MappedSpan {
  try {
    return mapUnsafe(span, opts);
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
