// ClickHouse rows → the API's shapes (docs/executions.md).
import { fromClickHouseTime } from '../time.ts';
import { DETAIL_TYPES } from '../pricing/cost.ts';
import { parseCostLines } from './cost-lines.ts';

export interface ListRow {
  trace_id: string;
  agent_id: string;
  provider: string;
  model: string;
  tokens_in: string;
  tokens_out: string;
  latency_ms: string;
  /** toString(cost_usd): exact, and aliased apart from the column so WHERE still compares decimals */
  cost_usd_text: string;
  cost_source: string;
  status: string;
  started_at: string;
  template_count: string | number;
  span_count: string | number;
  source: string;
  user_id: string;
  session_id: string;
  tags: string[];
  /** '' when no API key sent the execution */
  api_key_id: string;
}

export interface DetailRow extends ListRow {
  ended_at: string;
  received_at: string;
  error_message: string;
  tokens_cached_in: string;
  tokens_cache_write_in: string;
  tokens_reasoning: string;
  cost_computed_text: string | null;
  price_id: string;
  usage_warnings: string[];
  metadata: Record<string, string>;
  tu_prompt_id: string[];
  tu_version: number[];
  tu_version_ref: string[];
  tu_role: string[];
  tu_source: string[];
  tu_message_index: number[];
  template_inputs: string;
  environment: string;
  /** 028_usage_types.sql: counts come back as text */
  usage_details: Record<string, string | number>;
  pricing_context: Record<string, string>;
  cost_lines: string;
  conversation_history?: string;
}

/** Every detail usage type with its count (0 when the execution has none). */
function presentUsageDetails(m: Record<string, string | number> | undefined) {
  const out: Record<string, number> = {};
  for (const k of DETAIL_TYPES) out[k] = Number(m?.[k] ?? 0);
  return out;
}

/** The cost breakdown: the stored lines, named as the API names them. */
function presentBreakdown(text: string) {
  return parseCostLines(text).map((l) => ({
    usage_type: l.type,
    quantity: l.quantity,
    unit: l.unit,
    rate: l.rate,
    cost_usd: l.cost_usd,
    source: l.source,
    price_id: l.price_id || null,
    rule: l.rule,
    calls: l.calls,
    counted: l.counted,
  }));
}

export function presentListItem(r: ListRow) {
  const templateCount = Number(r.template_count);
  return {
    trace_id: r.trace_id,
    agent_id: r.agent_id,
    provider: r.provider,
    model: r.model,
    tokens_in: Number(r.tokens_in),
    tokens_out: Number(r.tokens_out),
    latency_ms: Number(r.latency_ms),
    cost_usd: Number(r.cost_usd_text),
    cost_source: r.cost_source,
    status: r.status,
    started_at: fromClickHouseTime(r.started_at),
    has_templates: templateCount > 0,
    template_count: templateCount,
    span_count: Number(r.span_count),
    source: r.source,
  };
}

/** A row of the list (GET .../executions): the export's item plus who ran it, its session, tags and API key. */
export function presentListRow(r: ListRow) {
  return {
    ...presentListItem(r),
    user_id: r.user_id || null,
    session_id: r.session_id || null,
    tags: r.tags,
    api_key_id: r.api_key_id || null,
  };
}

export function presentDetail(r: DetailRow) {
  const inputs = JSON.parse(r.template_inputs || '[]') as Array<Record<string, unknown>>;
  return {
    ...presentListItem(r),
    ended_at: fromClickHouseTime(r.ended_at),
    received_at: fromClickHouseTime(r.received_at),
    error_message: r.error_message || null,
    tokens_cached_in: Number(r.tokens_cached_in),
    tokens_cache_write_in: Number(r.tokens_cache_write_in),
    tokens_reasoning: Number(r.tokens_reasoning),
    usage_details: presentUsageDetails(r.usage_details),
    pricing_context: {
      service_tier: r.pricing_context?.service_tier || null,
      region: r.pricing_context?.region || null,
      batch: r.pricing_context?.batch === 'true',
    },
    cost_breakdown: presentBreakdown(r.cost_lines),
    cost_computed_usd: r.cost_computed_text === null ? null : Number(r.cost_computed_text),
    price_id: r.price_id || null,
    usage_warnings: r.usage_warnings,
    session_id: r.session_id || null,
    user_id: r.user_id || null,
    tags: r.tags,
    metadata: r.metadata,
    api_key_id: r.api_key_id || null,
    environment: r.environment || null,
    template_usages: r.tu_prompt_id.map((prompt_id, i) => ({
      prompt_id,
      version_ref: r.tu_version_ref[i]!,
      version: Number(r.tu_version[i]),
      inputs: inputs[i] ?? {},
      role: r.tu_role[i] || null,
      source: r.tu_source[i] || null,
      message_index: r.tu_message_index[i]! >= 0 ? Number(r.tu_message_index[i]) : null,
    })),
    ...(r.conversation_history !== undefined ? { conversation_history: JSON.parse(r.conversation_history) as unknown[] } : {}),
  };
}
