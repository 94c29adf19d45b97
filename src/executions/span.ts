// The shapes every OTLP decoder produces and the convention mapper consumes. Decoders (protobuf,
// OTLP/JSON, flat JSON) turn a request into DecodedSpans; mapSpan turns one into a MappedSpan;
// the ingest path stores both and trace assembly builds executions from them.
import type { PricingContext, UsageDetails } from '../pricing/cost.ts';

/** An attribute value after decoding: AnyValue of any kind, kvlist as an object, bytes as base64. */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export interface DecodedEvent {
  name: string;
  timeNs: bigint;
  attributes: Attributes;
}

export interface DecodedLink {
  traceId: string;
  spanId: string;
  attributes: Attributes;
}

export interface DecodedSpan {
  /** 32 lowercase hex characters, not all zero */
  traceId: string;
  /** 16 lowercase hex characters, not all zero */
  spanId: string;
  /** 16 lowercase hex characters, or '' for a root */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  kind: number;
  startTimeNs: bigint;
  endTimeNs: bigint;
  attributes: Attributes;
  events: DecodedEvent[];
  links: DecodedLink[];
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error */
  statusCode: number;
  statusMessage: string;
  /** The resource's attributes (one object shared by the spans of a resource) */
  resource: Attributes;
  scopeName: string;
  scopeVersion: string;
  /** What the decoder cut to stay within limits (attribute count, value size, depth), one note each */
  truncated: string[];
}

export interface RejectedSpan {
  /** Position of the span in the request, counting every span of every resource and scope */
  index: number;
  traceId?: string;
  spanId?: string;
  reason: string;
}

export interface DecodeResult {
  spans: DecodedSpan[];
  rejected: RejectedSpan[];
}

export interface DecodeLimits {
  /** attributes kept per span, event or link (the rest are dropped and noted) */
  maxAttributes: number;
  /** a string value longer than this (in characters) is cut and noted */
  maxValueChars: number;
  /** nesting deeper than this (arrays and kvlists) is cut and noted */
  maxDepth: number;
  /** events kept per span */
  maxEvents: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = { maxAttributes: 1024, maxValueChars: 1_048_576, maxDepth: 16, maxEvents: 1024 };

/** One message of a normalized conversation: the shape of direct records' conversation_history. */
export interface NormalizedMessage {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; name: string; arguments: unknown }>;
  tool_call_id?: string;
  name?: string;
}

export type SpanClass = 'inference' | 'tool' | 'agent' | 'other';

export interface SpanUsage {
  /** OpenTelemetry semantics: includes cached and cache-write tokens */
  tokensIn: number;
  /** includes reasoning tokens */
  tokensOut: number;
  cachedIn: number;
  cacheWriteIn: number;
  reasoning: number;
}

export interface SpanPromptUsage {
  promptId: string;
  /** integer, `latest` or a label, as sent; undefined → latest */
  versionRef?: string;
  inputs?: Record<string, unknown>;
}

export interface MappedSpan {
  spanClass: SpanClass;
  /** gen_ai.operation.name or its equivalent in the span's dialect ('' when none) */
  operation: string;
  /** normalised to the semconv values (openai, anthropic, aws.bedrock, ...); '' when unknown */
  provider: string;
  model: string;
  /** undefined when the span carries no usage at all */
  usage?: SpanUsage;
  /** Usage types beyond the totals, each a part of one (mapping/usage-details.ts); inference spans with usage only */
  usageDetails?: UsageDetails;
  /** What price conditions match against (service tier, region, batch) */
  pricingContext?: PricingContext;
  /** A cost the span itself states (gen_ai.usage.cost, llm.cost.total, operation.cost), as an exact decimal string */
  providedCostUsd?: string;
  /** The agent named on this span itself ('' when none; assembly falls back to ancestors, then service.name) */
  agentId: string;
  sessionId: string;
  /** The user the span ran for, its tags and metadata, from any convention (mapping/trace-attributes.ts) */
  userId: string;
  tags: string[];
  metadata: Record<string, string>;
  toolName: string;
  toolCallId: string;
  /** tool spans: arguments and result when the span carries them */
  toolArguments?: unknown;
  toolResult?: unknown;
  promptUsages: SpanPromptUsage[];
  /** The messages this span sent (input, system instructions first) and received (output) */
  inputMessages: NormalizedMessage[];
  outputMessages: NormalizedMessage[];
  /** error.type or the status message when the span failed ('' otherwise) */
  errorMessage: string;
  /** The dataset run and item this span's trace ran (traceloom.dataset.run_id and .item_id), when it names both */
  datasetLink?: { runId: string; itemId: string };
  /** For ?explain=true: what was mapped (field → source key) and what was ignored and why */
  explain: { mapped: Record<string, string>; ignored: Array<{ key: string; reason: string }> };
}
