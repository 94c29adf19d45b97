// The filter of an executions listing (GET …/executions and everything that applies the same
// filter: export, Parquet, evaluators' targets): the query's fields as one SQL condition with bound
// parameters, project predicate first, over every row (cancel rows included: readers collapse or
// sum sign); and the listing's cursor. SQL text only: the repositories run it.
import { badRequest } from '../errors.ts';
import { toScaled } from '../decimal.ts';
import { timeRange } from '../time.ts';

/** `exclude_<field>`: executions whose field is none of these values (a tag: carrying none of these tags). */
export type Exclusions = { [K in ExcludableField as `exclude_${K}`]?: string[] };

export interface ListQuery extends Exclusions {
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
  /** what made the execution (api, otlp, playground, experiment): any of them */
  source?: string[];
  /** the deployment environment: any of them */
  environment?: string[];
  /** the page's order (docs/executions.md "Order"): started_at by default, newest first */
  sort?: ListSort;
  order?: 'asc' | 'desc';
  /** score names whose latest live value each listed item carries (`scores: {name: value}`) */
  scores?: string[];
  limit: number;
  offset: number;
  cursor?: string;
}

/** What a page can be ordered by: the key, then started_at and trace_id as ties. */
export type ListSort = 'started_at' | 'cost_usd' | 'latency_ms' | 'tokens';

/** The SQL of each sort key other than time (whose order is the table's own). */
export const SORT_EXPRESSIONS: Record<Exclude<ListSort, 'started_at'>, { sql: string; bound: string }> = {
  cost_usd: { sql: 'cost_usd', bound: 'toDecimal64({c_key:String}, 9)' },
  latency_ms: { sql: 'latency_ms', bound: 'toUInt64({c_key:String})' },
  tokens: { sql: '(tokens_in + tokens_out)', bound: 'toUInt64({c_key:String})' },
};

/** The fields an `exclude_<field>` parameter applies to (the columns of the `<field>` filters, and tags). */
export const EXCLUDABLE = ['provider', 'model', 'agent_id', 'user_id', 'session_id', 'api_key_id', 'source', 'environment', 'tag'] as const;
export type ExcludableField = (typeof EXCLUDABLE)[number];

/** The sessions or users of a window (GET .../sessions, .../users): docs/executions.md. */
export interface ActivityQuery {
  start?: string;
  end?: string;
  user_id?: string[];
  limit: number;
  /** sessions only: rows skipped (at most 10,000) */
  offset?: number;
  /** sessions: count the window's sessions too (a grouped read of all of them) */
  with_total?: boolean;
  /** sessions only: a case-insensitive part of the session id or of the user id */
  search?: string;
  /** sessions only: the order, descending (last_seen by default) */
  sort?: 'last_seen' | 'cost_usd' | 'executions' | 'errors';
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
  cost_source, status, started_at, length(\`tu.prompt_id\`) AS template_count, span_count, source, user_id, session_id, tags,
  api_key_id`;

/** Comma-separated or repeated values, trimmed, empty ones dropped. */
/** Comma-separated or repeated values, trimmed, empty ones dropped; undefined for none. */
export function anyOf(values: string[] | undefined): string[] | undefined {
  const out = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return out.length ? out : undefined;
}

/** Where a page ends: its last row's sort key (text; '' for time), started_at and trace_id. */
export interface ListCursor {
  key: string;
  startedAt: string;
  traceId: string;
}

/**
 * A page's cursor. Newest first by time (the default) keeps its first form, [started_at, trace_id];
 * any other order names itself, so a cursor given with another order is refused, not misread.
 */
export function encodeCursor(after: ListCursor, sort: ListSort = 'started_at', order: 'asc' | 'desc' = 'desc'): string {
  const value =
    sort === 'started_at' && order === 'desc' ? [after.startedAt, after.traceId] : [sort, order, after.key, after.startedAt, after.traceId];
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

const CH_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const KEY_TEXT = /^[0-9]{1,20}(\.[0-9]{1,9})?$/;

export function decodeCursor(cursor: string, sort: ListSort = 'started_at', order: 'asc' | 'desc' = 'desc'): ListCursor {
  let v: unknown[];
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error('shape');
  } catch {
    throw badRequest('cursor: is not a cursor returned by this endpoint');
  }
  const [s, o, key, startedAt, traceId] = (v.length === 2 ? ['started_at', 'desc', '', ...v] : v) as string[];
  if (v.length !== 2 && v.length !== 5) throw badRequest('cursor: is not a cursor returned by this endpoint');
  if (s !== sort || o !== order)
    throw badRequest(`cursor: was returned for sort=${s}&order=${o}, not sort=${sort}&order=${order}: give the same order, or no cursor`);
  if (!CH_TIME.test(startedAt!) || typeof traceId !== 'string' || (sort !== 'started_at' && !KEY_TEXT.test(key!)))
    throw badRequest('cursor: is not a cursor returned by this endpoint');
  return { key: key!, startedAt: startedAt!, traceId: traceId! };
}

/** The filter of a listing, over every row (cancel rows included: readers collapse or sum sign). */
export function executionFilter(projectId: string, q: ListQuery, scoreFilter: ScoreFilter): ExecutionFilter {
  const parts = ['project_id = {project_id:String}'];
  const params: Record<string, unknown> = { project_id: projectId };
  for (const field of ['provider', 'model', 'agent_id', 'user_id', 'session_id', 'api_key_id', 'source', 'environment'] as const) {
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
  // Exclusions: a cancel row repeats its row's values, so it is excluded with it and sums stay exact.
  for (const field of EXCLUDABLE) {
    const values = field === 'tag' ? (q.exclude_tag ?? []).map((t) => t.trim()).filter(Boolean) : anyOf(q[`exclude_${field}`]);
    if (!values?.length) continue;
    parts.push(field === 'tag' ? 'NOT hasAny(tags, {x_tag:Array(String)})' : `${field} NOT IN {x_${field}:Array(String)}`);
    params[`x_${field}`] = values;
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

/**
 * The rows of a sessions or users page (GET …/sessions, …/users): the window and users; of
 * sessions, `search` too, a case-insensitive part of the session id or of the user id (the
 * session's figures are then those of its executions that match, as with `user_id`).
 */
export function activityFilter(projectId: string, by: 'session' | 'user', q: ActivityQuery, scoreFilter: ScoreFilter): ExecutionFilter {
  const w = executionFilter(projectId, { start: q.start, end: q.end, user_id: q.user_id, limit: 0, offset: 0 }, scoreFilter);
  const search = by === 'session' ? (q.search ?? '').trim() : '';
  if (!search) return w;
  return {
    sql: `${w.sql} AND (positionCaseInsensitiveUTF8(session_id, {search:String}) > 0 OR positionCaseInsensitiveUTF8(user_id, {search:String}) > 0)`,
    params: { ...w.params, search },
  };
}
