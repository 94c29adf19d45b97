// A decoded span and its mapping → one row of the `spans` table. The mapped fields are stored so
// trace assembly reads light columns; everything the exporter sent is kept (attributes, resource,
// events, links) for the hierarchy, and the normalised messages for the timeline.
import type { DecodedSpan, MappedSpan, NormalizedMessage } from './span.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import { contextColumns } from './cost-lines.ts';

const KIND = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS = ['UNSET', 'OK', 'ERROR'];

export const spanKindName = (kind: number) => KIND[kind] ?? 'UNSPECIFIED';
export const statusName = (code: number) => STATUS[code] ?? 'UNSET';

export interface SpanRow {
  project_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  start_time_ns: string;
  end_time_ns: string;
  received_at: string;
  name: string;
  kind: string;
  status_code: string;
  status_message: string;
  service_name: string;
  scope_name: string;
  scope_version: string;
  span_class: string;
  operation: string;
  provider: string;
  model: string;
  agent_id: string;
  session_id: string;
  user_id: string;
  tags: string[];
  metadata: Record<string, string>;
  has_usage: number;
  tokens_in: number;
  tokens_out: number;
  tokens_cached_in: number;
  tokens_cache_write_in: number;
  tokens_reasoning: number;
  cost_provided: string | null;
  tool_name: string;
  tool_call_id: string;
  error_message: string;
  prompt_usages: string;
  truncated: string[];
  attributes: string;
  resource: string;
  events: string;
  links: string;
  messages: string;
  /** The API key that sent the span ('' when the caller was not an API key): docs/spend.md. */
  api_key_id: string;
  /** The resource's `deployment.environment.name` (else `deployment.environment`), '' without one. */
  environment: string;
  /** `gen_ai.response.id`: evaluation events without span context are joined through it. */
  response_id: string;
  /** Usage types beyond the totals (028_usage_types.sql): only non-zero counts. */
  usage_details: Record<string, number>;
  /** What price conditions match against: service_tier, region, batch ('true'). */
  pricing_context: Record<string, string>;
}

type ReadBackColumns =
  | 'trace_id'
  | 'span_id'
  | 'parent_span_id'
  | 'start_time_ns'
  | 'end_time_ns'
  | 'received_at'
  | 'name'
  | 'status_code'
  | 'status_message'
  | 'service_name'
  | 'span_class'
  | 'operation'
  | 'provider'
  | 'model'
  | 'agent_id'
  | 'session_id'
  | 'user_id'
  | 'tags'
  | 'metadata'
  | 'tool_name'
  | 'tool_call_id'
  | 'error_message'
  | 'prompt_usages'
  | 'messages'
  | 'api_key_id'
  | 'environment'
  | 'usage_details'
  | 'pricing_context';

/** The `messages` column of a span, parsed. */
export interface ParsedMessages {
  input?: NormalizedMessage[];
  output?: NormalizedMessage[];
  tool_arguments?: unknown;
  tool_result?: unknown;
}

/** The columns of `spans` that make a StoredSpan. */
export const STORED_SPAN_COLUMNS: ReadonlySet<string> = new Set([
  'trace_id',
  'span_id',
  'parent_span_id',
  'start_time_ns',
  'end_time_ns',
  'received_at',
  'name',
  'status_code',
  'status_message',
  'service_name',
  'span_class',
  'operation',
  'provider',
  'model',
  'agent_id',
  'session_id',
  'user_id',
  'tags',
  'metadata',
  'has_usage',
  'tokens_in',
  'tokens_out',
  'tokens_cached_in',
  'tokens_cache_write_in',
  'tokens_reasoning',
  'cost_provided',
  'tool_name',
  'tool_call_id',
  'error_message',
  'prompt_usages',
  'messages',
  'api_key_id',
  'environment',
  'usage_details',
  'pricing_context',
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

/** Every column of a span, as the hierarchy and the timeline read it. */
export type FullSpan = StoredSpan & Pick<SpanRow, 'kind' | 'attributes' | 'resource' | 'events' | 'links' | 'scope_name' | 'truncated'>;

const MOVED = "[normalised into the span's messages]";

/**
 * The attributes as sent, less the bulky message values that were normalised into `messages`:
 * the same content is not stored (and parsed by the engine) twice. Short values stay as sent.
 */
function attributesJson(span: DecodedSpan, mapped: MappedSpan): string {
  const sources = [mapped.explain.mapped.inputMessages, mapped.explain.mapped.outputMessages].filter(
    (v): v is string => typeof v === 'string',
  );
  if (sources.length === 0) return JSON.stringify(span.attributes);
  let out: Record<string, unknown> | undefined;
  for (const key of sources.flatMap((src) => src.split(/[\s,+]+/))) {
    const v = span.attributes[key];
    if (typeof v === 'string' && v.length > 256) (out ??= { ...span.attributes })[key] = MOVED;
  }
  return JSON.stringify(out ?? span.attributes);
}

/** A token count the columns hold exactly: a whole number from 0 to 2^53 − 1 (beyond: clamped, and noted). */
function tokenCount(n: number | undefined, notes: string[], what: string): number {
  if (n === undefined) return 0;
  if (!Number.isFinite(n) || n < 0) {
    notes.push(`${what}: ${n} is not a token count; stored as 0`);
    return 0;
  }
  if (n > Number.MAX_SAFE_INTEGER) {
    notes.push(`${what}: ${n} clamped to ${Number.MAX_SAFE_INTEGER}`);
    return Number.MAX_SAFE_INTEGER;
  }
  return Math.floor(n);
}

/** A provided cost as Decimal(18, 9) holds it: 0 to 999,999,999.999999999 at 9 decimals; anything else is dropped (and noted). */
function providedCost(v: string | undefined, notes: string[]): string | null {
  if (v === undefined) return null;
  try {
    const nanos = toScaled(v, NANOS);
    if (nanos >= 0n && nanos < 10n ** 18n) return fromScaled(nanos, NANOS);
  } catch {
    // not a decimal
  }
  notes.push(`cost: ${v} is outside 0..999999999.999999999 USD; ignored`);
  return null;
}

/** A span's usage details as the Map column holds them: whole counts, zero ones left out. */
function detailCounts(d: MappedSpan['usageDetails'], notes: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(d ?? {})) {
    const n = tokenCount(v, notes, `usage_details.${k}`);
    if (n > 0) out[k] = n;
  }
  return out;
}

const ZERO_SPAN_ID = '0000000000000000';

/** Unsigned 64-bit nanoseconds (a negative or absurd time is clamped to 0 rather than refused). */
const ns = (v: bigint) => (v < 0n || v >= 1n << 64n ? '0' : v.toString());

export function spanRow(
  projectId: string,
  span: DecodedSpan,
  mapped: MappedSpan,
  receivedAt: string,
  resourceJson: string,
  apiKeyId = '',
): SpanRow {
  const u = mapped.usage;
  const service = span.resource['service.name'];
  const environment = span.resource['deployment.environment.name'] ?? span.resource['deployment.environment'];
  const notes = [...span.truncated];
  return {
    project_id: projectId,
    trace_id: span.traceId,
    span_id: span.spanId,
    // Some SDKs send an all-zero parent for a root.
    parent_span_id: span.parentSpanId === ZERO_SPAN_ID ? '' : span.parentSpanId,
    start_time_ns: ns(span.startTimeNs),
    end_time_ns: ns(span.endTimeNs),
    received_at: receivedAt,
    name: span.name,
    kind: spanKindName(span.kind),
    status_code: statusName(span.statusCode),
    status_message: span.statusMessage,
    service_name: typeof service === 'string' ? service : '',
    scope_name: span.scopeName,
    scope_version: span.scopeVersion,
    span_class: mapped.spanClass,
    operation: mapped.operation,
    provider: mapped.provider,
    model: mapped.model,
    agent_id: mapped.agentId,
    session_id: mapped.sessionId,
    user_id: mapped.userId,
    tags: mapped.tags,
    metadata: mapped.metadata,
    has_usage: u ? 1 : 0,
    tokens_in: tokenCount(u?.tokensIn, notes, 'tokens_in'),
    tokens_out: tokenCount(u?.tokensOut, notes, 'tokens_out'),
    tokens_cached_in: tokenCount(u?.cachedIn, notes, 'tokens_cached_in'),
    tokens_cache_write_in: tokenCount(u?.cacheWriteIn, notes, 'tokens_cache_write_in'),
    tokens_reasoning: tokenCount(u?.reasoning, notes, 'tokens_reasoning'),
    cost_provided: providedCost(mapped.providedCostUsd, notes),
    tool_name: mapped.toolName,
    tool_call_id: mapped.toolCallId,
    error_message: mapped.errorMessage,
    prompt_usages: mapped.promptUsages.length ? JSON.stringify(mapped.promptUsages) : '',
    truncated: notes,
    attributes: attributesJson(span, mapped),
    resource: resourceJson,
    events: span.events.length
      ? JSON.stringify(span.events.map((e) => ({ name: e.name, time_ns: e.timeNs.toString(), attributes: e.attributes })))
      : '',
    links: span.links.length ? JSON.stringify(span.links) : '',
    messages:
      mapped.inputMessages.length || mapped.outputMessages.length || mapped.toolArguments !== undefined || mapped.toolResult !== undefined
        ? JSON.stringify({
            input: mapped.inputMessages,
            output: mapped.outputMessages,
            tool_arguments: mapped.toolArguments,
            tool_result: mapped.toolResult,
          })
        : '',
    api_key_id: apiKeyId,
    environment: typeof environment === 'string' ? environment.slice(0, 128) : '',
    response_id: typeof span.attributes['gen_ai.response.id'] === 'string' ? span.attributes['gen_ai.response.id'] : '',
    usage_details: detailCounts(mapped.usageDetails, notes),
    pricing_context: contextColumns(mapped.pricingContext),
  };
}
