// One row of the `executions` table, whatever made it: a direct record (source "api") or the
// assembly of a trace's spans (source "otlp"). Both build it here, so the two cannot drift.
import crypto from 'node:crypto';
import { canonicalJson } from '../prompts/template.ts';
import type { CostSource } from './pricing.ts';

export interface TemplateUsageColumns {
  'tu.prompt_id': string[];
  'tu.version': number[];
  'tu.version_ref': string[];
  'tu.role': string[];
  'tu.source': string[];
  'tu.message_index': number[];
  /** JSON array: the inputs of each usage, in order */
  template_inputs: string;
}

/** What an execution says: every column but its version, sign, arrival and content hash. */
export interface ExecutionContent extends TemplateUsageColumns {
  project_id: string;
  started_at: string;
  trace_id: string;
  ended_at: string;
  source: ExecutionSource;
  agent_id: string;
  provider: string;
  model: string;
  status: 'ok' | 'error';
  error_message: string;
  tokens_in: number;
  tokens_out: number;
  tokens_cached_in: number;
  tokens_cache_write_in: number;
  tokens_reasoning: number;
  latency_ms: number;
  cost_usd: string;
  cost_source: CostSource;
  cost_computed_usd: string | null;
  price_id: string;
  usage_warnings: string[];
  session_id: string;
  user_id: string;
  tags: string[];
  metadata: Record<string, string>;
  span_count: number;
  /** The API key that sent it ('' for other credentials); of an OTLP trace, its root span's (docs/spend.md). */
  api_key_id: string;
  /** The deployment environment (docs/spend.md, the `environment` dimension); absent when none was given, so content hashes stay what they were. */
  environment?: string;
  /** JSON array of the conversation's messages */
  conversation_history: string;
  /** Usage types beyond the totals (028_usage_types.sql), non-zero only; absent when none. */
  usage_details?: Record<string, number>;
  /** What price conditions matched against (service_tier, region, batch: 'true'); absent when none. */
  pricing_context?: Record<string, string>;
  /** The cost breakdown, JSON (cost-lines.ts); absent for an unpriced execution. */
  cost_lines?: string;
}

/** What made an execution: a record sent to the API, OTLP spans, or the service's playground. */
export type ExecutionSource = 'api' | 'otlp' | 'playground' | 'experiment';

export interface ExecutionRow extends ExecutionContent {
  /** Corrections of an assembled execution: a cancel row (sign −1, same version) and the new one (version + 1). */
  version: number;
  sign: 1 | -1;
  received_at: string;
  content_hash: string;
}

/** The hash that tells whether a repeat (a retried request, a re-assembly) carries the same content. */
export function contentHash(value: unknown): string {
  return crypto.createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export interface ResolvedTemplateUsage {
  prompt_id: string;
  version: number;
  version_ref: string;
  inputs: Record<string, unknown>;
  role: string;
  source: string;
  /** −1 when unknown */
  message_index: number;
}

export function templateUsageColumns(usages: readonly ResolvedTemplateUsage[]): TemplateUsageColumns {
  return {
    'tu.prompt_id': usages.map((u) => u.prompt_id),
    'tu.version': usages.map((u) => u.version),
    'tu.version_ref': usages.map((u) => u.version_ref),
    'tu.role': usages.map((u) => u.role),
    'tu.source': usages.map((u) => u.source),
    'tu.message_index': usages.map((u) => u.message_index),
    template_inputs: JSON.stringify(usages.map((u) => u.inputs)),
  };
}

export function executionRow(
  content: ExecutionContent,
  meta: Pick<ExecutionRow, 'version' | 'sign' | 'received_at' | 'content_hash'>,
): ExecutionRow {
  return { ...content, ...meta };
}
