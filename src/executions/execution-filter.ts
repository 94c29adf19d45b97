// The filter of an executions listing (GET …/executions and everything that applies the same
// filter: export, Parquet, evaluators' targets): the query's fields as one SQL condition with bound
// parameters, project predicate first, over every row (cancel rows included: readers collapse or
// sum sign); and the listing's cursor. SQL text only: the repositories run it.
import { badRequest } from '../errors.ts';
import { toScaled } from '../decimal.ts';
import { timeRange } from '../time.ts';

export interface ListQuery {
  provider?: string[];
  model?: string[];
  agent_id?: string[];
  has_templates?: boolean;
  /** USD decimals as the query gave them (schema: at most 9 + 9 digits), compared exactly. */
  min_cost?: string;
  max_cost?: string;
  start?: string;
  end?: string;
  prompt_id?: string;
  /** executions that used a prompt by this label (its usage's `version_ref`; of `prompt_id` when both are given) */
  prompt_label?: string;
  /** with prompt_id: executions whose first use of that prompt was this version (the version comparison's groups) */
  prompt_version?: number;
  status?: 'ok' | 'error';
  user_id?: string[];
  session_id?: string[];
  /** any of these API keys (key ids; '' never matches: give a key) */
  api_key_id?: string[];
  /** any of these tags (repeat the parameter; commas are part of a tag) */
  tag?: string[];
  /** executions with a live score of each of these names */
  has_score?: string[];
  /** `score.<name>.gte|lte|eq` parameters (a ScoreFilter turns them into SQL) */
  [scoreCondition: `score.${string}`]: string;
  /** `metadata.<key>` parameters: executions whose metadata has that key with that value */
  [metadataCondition: `metadata.${string}`]: string;
  limit: number;
  offset: number;
  cursor?: string;
}

/** The sessions or users of a window (GET .../sessions, .../users): docs/executions.md. */
export interface ActivityQuery {
  start?: string;
  end?: string;
  user_id?: string[];
  limit: number;
}

/** A condition on executions and its bound parameters. */
export interface ExecutionFilter {
  sql: string;
  params: Record<string, unknown>;
}

/**
 * The condition on `trace_id` of a query's score parameters (`score.<name>.…`, `has_score`),
 * `projectParam` naming the project's parameter: the scores domain writes it
 * (scores/score-repository.ts scoreFilterSql), the composition hands it to the listing.
 */
export type ScoreFilter = (query: Record<string, unknown>, projectParam: string) => { parts: string[]; params: Record<string, unknown> };

export const LIST_COLUMNS = `trace_id, agent_id, provider, model, tokens_in, tokens_out, latency_ms, toString(cost_usd) AS cost_usd_text,
  cost_source, status, started_at, length(\`tu.prompt_id\`) AS template_count, span_count, source, user_id, session_id, tags`;

/** Comma-separated or repeated values, trimmed, empty ones dropped. */
/** Comma-separated or repeated values, trimmed, empty ones dropped; undefined for none. */
export function anyOf(values: string[] | undefined): string[] | undefined {
  const out = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return out.length ? out : undefined;
}

export function encodeCursor(startedAt: string, traceId: string): string {
  return Buffer.from(JSON.stringify([startedAt, traceId])).toString('base64url');
}

export function decodeCursor(cursor: string): { startedAt: string; traceId: string } {
  try {
    const [startedAt, traceId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof startedAt !== 'string' || typeof traceId !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/.test(startedAt))
      throw new Error('shape');
    return { startedAt, traceId };
  } catch {
    throw badRequest('cursor: is not a cursor returned by this endpoint');
  }
}

/** The filter of a listing, over every row (cancel rows included: readers collapse or sum sign). */
export function executionFilter(projectId: string, q: ListQuery, scoreFilter: ScoreFilter): ExecutionFilter {
  const parts = ['project_id = {project_id:String}'];
  const params: Record<string, unknown> = { project_id: projectId };
  for (const field of ['provider', 'model', 'agent_id', 'user_id', 'session_id', 'api_key_id'] as const) {
    const values = anyOf(q[field]);
    if (values) {
      parts.push(`${field} IN {${field}:Array(String)}`);
      params[field] = values;
    }
  }
  const tags = (q.tag ?? []).map((t) => t.trim()).filter(Boolean);
  if (tags.length) {
    parts.push('hasAny(tags, {tags:Array(String)})');
    params.tags = tags;
  }
  if (q.has_templates !== undefined) parts.push(q.has_templates ? 'notEmpty(`tu.prompt_id`)' : 'empty(`tu.prompt_id`)');
  if (q.min_cost !== undefined) {
    parts.push('cost_usd >= toDecimal64({min_cost:String}, 9)');
    params.min_cost = String(q.min_cost);
  }
  if (q.max_cost !== undefined) {
    parts.push('cost_usd <= toDecimal64({max_cost:String}, 9)');
    params.max_cost = String(q.max_cost);
  }
  if (q.min_cost !== undefined && q.max_cost !== undefined && toScaled(q.min_cost, 9) > toScaled(q.max_cost, 9))
    throw badRequest('min_cost: is greater than max_cost');
  const range = timeRange(q.start, q.end);
  if (range.start) {
    parts.push("started_at >= toDateTime64({start:String}, 3, 'UTC')");
    params.start = range.start;
  }
  if (range.end) {
    parts.push("started_at < toDateTime64({end:String}, 3, 'UTC')");
    params.end = range.end;
  }
  if (q.prompt_id && q.prompt_label) {
    parts.push('arrayExists((p, r) -> p = {prompt_id:String} AND r = {prompt_label:String}, `tu.prompt_id`, `tu.version_ref`)');
    Object.assign(params, { prompt_id: q.prompt_id, prompt_label: q.prompt_label });
  } else if (q.prompt_id) {
    parts.push('has(`tu.prompt_id`, {prompt_id:String})');
    params.prompt_id = q.prompt_id;
  } else if (q.prompt_label) {
    parts.push('has(`tu.version_ref`, {prompt_label:String})');
    params.prompt_label = q.prompt_label;
  }
  if (q.prompt_version !== undefined) {
    // The execution's first use of the prompt, as the version comparison groups it (prompt-group-repository.ts).
    if (!q.prompt_id) throw badRequest('prompt_version: give prompt_id too (the version of which prompt)');
    parts.push('arrayFirst((v, p) -> p = {prompt_id:String}, `tu.version`, `tu.prompt_id`) = {prompt_version:UInt32}');
    params.prompt_version = q.prompt_version;
  }
  if (q.status) {
    parts.push('status = {status:String}');
    params.status = q.status;
  }
  const metadata = Object.entries(q).filter(([k]) => k.startsWith('metadata.'));
  metadata.forEach(([k, v], i) => {
    parts.push(`metadata[{mk${i}:String}] = {mv${i}:String}`);
    params[`mk${i}`] = k.slice('metadata.'.length);
    params[`mv${i}`] = String(v);
  });
  const scored = scoreFilter(q as unknown as Record<string, unknown>, 'project_id');
  parts.push(...scored.parts);
  Object.assign(params, scored.params);
  return { sql: parts.join(' AND '), params };
}
