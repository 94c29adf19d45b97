// Reads of executions. Every query carries the project predicate; listings read light columns
// only (never messages or template inputs); a trace is found through the trace index.
import { badRequest } from '../errors.ts';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { toScaled } from '../pricing/decimal.ts';
import { parseTime, toClickHouseTime } from '../time.ts';
import { presentDetail, presentListItem, type DetailRow, type ListRow } from './present.ts';

export interface ListQuery {
  provider?: string[];
  model?: string[];
  agent_id?: string[];
  has_templates?: boolean;
  min_cost?: number;
  max_cost?: number;
  start?: string;
  end?: string;
  prompt_id?: string;
  status?: 'ok' | 'error';
  limit: number;
  offset: number;
  cursor?: string;
}

const LIST_COLUMNS = `trace_id, agent_id, provider, model, tokens_in, tokens_out, latency_ms, toString(cost_usd) AS cost_usd_text,
  cost_source, status, started_at, length(\`tu.prompt_id\`) AS template_count, span_count, source`;

/** Comma-separated or repeated values, trimmed, empty ones dropped. */
function anyOf(values: string[] | undefined): string[] | undefined {
  const out = (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return out.length ? out : undefined;
}

export function encodeCursor(startedAt: string, traceId: string): string {
  return Buffer.from(JSON.stringify([startedAt, traceId])).toString('base64url');
}

function decodeCursor(cursor: string): { startedAt: string; traceId: string } {
  try {
    const [startedAt, traceId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof startedAt !== 'string' || typeof traceId !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/.test(startedAt)) throw new Error('shape');
    return { startedAt, traceId };
  } catch {
    throw badRequest('cursor: is not a cursor returned by this endpoint');
  }
}

type Waiter = { resolve: (hash: string | undefined) => void; reject: (err: unknown) => void };

export function createExecutionQueries(ch: ClickHouseStore) {
  const pendingLookups = new Map<string, Map<string, Waiter[]>>();
  let lookupScheduled = false;
  function runLookups(): void {
    lookupScheduled = false;
    const batch = [...pendingLookups];
    pendingLookups.clear();
    for (const [projectId, byTrace] of batch) {
      const ids = [...byTrace.keys()];
      ch.query<{ trace_id: string; content_hash: string }>(
        'SELECT trace_id, content_hash FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids },
        'executions.traceHash',
      ).then(
        (rows) => {
          const found = new Map(rows.map((r) => [r.trace_id, r.content_hash]));
          for (const [traceId, waiters] of byTrace) for (const w of waiters) w.resolve(found.get(traceId));
        },
        (err: unknown) => {
          for (const waiters of byTrace.values()) for (const w of waiters) w.reject(err);
        },
      );
    }
  }

  /** The filter of a listing; `liveOnly` keeps the +1 rows (for FINAL reads), else cancel rows too (for sums of sign). */
  function where(projectId: string, q: ListQuery, liveOnly: boolean): { sql: string; params: Record<string, unknown> } {
    const parts = ['project_id = {project_id:String}', ...(liveOnly ? ['sign = 1'] : [])];
    const params: Record<string, unknown> = { project_id: projectId };
    for (const field of ['provider', 'model', 'agent_id'] as const) {
      const values = anyOf(q[field]);
      if (values) {
        parts.push(`${field} IN {${field}:Array(String)}`);
        params[field] = values;
      }
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
    if (q.min_cost !== undefined && q.max_cost !== undefined && toScaled(q.min_cost, 9) > toScaled(q.max_cost, 9)) throw badRequest('min_cost: is greater than max_cost');
    const start = q.start !== undefined ? parseTime(q.start, 'start') : undefined;
    const end = q.end !== undefined ? parseTime(q.end, 'end') : undefined;
    if (start && end && start >= end) throw badRequest('start: must be before end');
    if (start) {
      parts.push("started_at >= toDateTime64({start:String}, 3, 'UTC')");
      params.start = toClickHouseTime(start);
    }
    if (end) {
      parts.push("started_at < toDateTime64({end:String}, 3, 'UTC')");
      params.end = toClickHouseTime(end);
    }
    if (q.prompt_id) {
      parts.push('has(`tu.prompt_id`, {prompt_id:String})');
      params.prompt_id = q.prompt_id;
    }
    if (q.status) {
      parts.push('status = {status:String}');
      params.status = q.status;
    }
    return { sql: parts.join(' AND '), params };
  }

  return {
    /**
     * The content hash of a recorded trace, or undefined when the trace is new. Lookups that
     * arrive together are answered by one query per project (ingest sends many at once).
     */
    traceHash(projectId: string, traceId: string): Promise<string | undefined> {
      return new Promise((resolve, reject) => {
        let byTrace = pendingLookups.get(projectId);
        if (!byTrace) pendingLookups.set(projectId, (byTrace = new Map()));
        const waiting = byTrace.get(traceId) ?? [];
        waiting.push({ resolve, reject });
        byTrace.set(traceId, waiting);
        if (!lookupScheduled) {
          lookupScheduled = true;
          setImmediate(runLookups);
        }
      });
    },

    async list(projectId: string, q: ListQuery) {
      if (q.cursor && q.offset > 0) throw badRequest('offset: cannot be combined with cursor');
      const w = where(projectId, q, true);
      const counted = where(projectId, q, false);
      const params: Record<string, unknown> = { ...w.params, limit: q.limit, offset: q.offset };
      let cursorCondition = '';
      if (q.cursor) {
        const c = decodeCursor(q.cursor);
        cursorCondition = " AND (started_at, trace_id) < (toDateTime64({c_started:String}, 3, 'UTC'), {c_trace:String})";
        Object.assign(params, { c_started: c.startedAt, c_trace: c.traceId });
      }
      const page = (bound: string | undefined) =>
        ch.query<ListRow>(
          // FINAL per partition: a trace's rows share its started_at, hence its month partition.
          `SELECT ${LIST_COLUMNS} FROM executions FINAL
           WHERE ${w.sql}${cursorCondition}${bound ? " AND started_at >= toDateTime64({bound:String}, 3, 'UTC')" : ''}
           ORDER BY started_at DESC, trace_id DESC LIMIT {limit:UInt32} OFFSET {offset:UInt32}
           SETTINGS do_not_merge_across_partitions_select_final = 1`,
          { ...params, bound },
          'executions.list',
        );
      const pageAndBound = async (): Promise<ListRow[]> => {
        // The newest offset+limit raw rows, read in key order without FINAL, bound the FINAL read
        // to a short time range. Raw rows include every live row, so the bound only falls short
        // when cancel rows crowd the range: then the unbounded read answers.
        const need = q.offset + q.limit;
        const raw = await ch.query<{ t: string; n: string }>(
          `SELECT min(started_at) AS t, count() AS n FROM (
             SELECT started_at FROM executions WHERE ${counted.sql}${cursorCondition} ORDER BY started_at DESC, trace_id DESC LIMIT {need:UInt32})`,
          { ...counted.params, ...params, need },
          'executions.list.bound',
        );
        const n = Number(raw[0]?.n ?? 0);
        if (n === 0) return [];
        const rows = await page(raw[0]!.t);
        return rows.length === q.limit || n < need ? rows : page(undefined);
      };
      const [rows, totals] = await Promise.all([
        pageAndBound(),
        // Without FINAL: a cancel row repeats the values of the row it cancels, so sum(sign) over
        // any filter counts each logical execution once. Light columns only.
        ch.query<{ total: string }>(`SELECT sum(sign) AS total FROM executions WHERE ${counted.sql}`, counted.params, 'executions.list.total'),
      ]);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(presentListItem),
        total: Number(totals[0]?.total ?? 0),
        limit: q.limit,
        offset: q.offset,
        next_cursor: rows.length === q.limit && last ? encodeCursor(last.started_at, last.trace_id) : null,
      };
    },

    /**
     * Every matching execution, newest first, as a stream of list items: rows arrive from
     * ClickHouse in blocks and leave as they come, so memory stays flat whatever the count.
     */
    async *export(projectId: string, q: Omit<ListQuery, 'limit' | 'offset' | 'cursor'>): AsyncGenerator<ReturnType<typeof presentListItem>> {
      const w = where(projectId, { ...q, limit: 0, offset: 0 }, true);
      const rs = await ch.client.query({
        query: `SELECT ${LIST_COLUMNS} FROM executions FINAL WHERE ${w.sql} ORDER BY started_at DESC, trace_id DESC
                SETTINGS do_not_merge_across_partitions_select_final = 1`,
        query_params: w.params,
        format: 'JSONEachRow',
        clickhouse_settings: { log_comment: 'executions.export' },
      });
      for await (const rows of rs.stream()) {
        for (const row of rows as Array<{ json<T>(): T }>) yield presentListItem(row.json<ListRow>());
      }
    },

    async get(projectId: string, traceId: string, includeMessages: boolean) {
      const [loc] = await ch.query<{ started_at: string }>(
        'SELECT started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id = {t:String} LIMIT 1',
        { p: projectId, t: traceId },
        'executions.get.locate',
      );
      if (!loc) return undefined;
      const [row] = await ch.query<DetailRow>(
        `SELECT ${LIST_COLUMNS}, ended_at, received_at, error_message, tokens_cached_in, tokens_cache_write_in, tokens_reasoning,
           toString(cost_computed_usd) AS cost_computed_text, price_id, usage_warnings, session_id, tags, metadata,
           \`tu.prompt_id\` AS tu_prompt_id, \`tu.version\` AS tu_version, \`tu.version_ref\` AS tu_version_ref, \`tu.role\` AS tu_role,
           \`tu.source\` AS tu_source, \`tu.message_index\` AS tu_message_index, template_inputs
           ${includeMessages ? ', conversation_history' : ''}
         FROM executions FINAL
         WHERE project_id = {p:String} AND started_at = toDateTime64({s:String}, 3, 'UTC') AND trace_id = {t:String} AND sign = 1
         LIMIT 1`,
        { p: projectId, s: loc.started_at, t: traceId },
        'executions.get',
      );
      return row ? presentDetail(row) : undefined;
    },
  };
}

export type ExecutionQueries = ReturnType<typeof createExecutionQueries>;
