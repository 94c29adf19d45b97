// The `executions` table and its trace index `execution_traces`: every SQL statement that reads
// them, and the insert of assembled executions. Every query carries the project predicate
// (recovery after a restart, which looks across projects, excepted); listings read light columns
// only (never messages or template inputs); a trace is found through the trace index.
import { badRequest } from '../errors.ts';
import type { ClickHouseSettings } from '@clickhouse/client';
import type { ExecutionStamp } from '../scores/score-stamps.ts';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import {
  breakdownKeysSql,
  breakdownSql,
  EXECUTIONS_ARRAYS,
  type BreakdownRead,
  type BreakdownRow,
  type BreakdownSourceSql,
} from './spend-breakdown-sql.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import { EXPORTED_DIMENSION_COLUMNS, SPEND_DIMENSIONS, type SpendRollup } from './spend-dimensions.ts';
import { fromClickHouseTime, timeRange, toClickHouseTime } from '../time.ts';
import { presentDetail, presentListItem, presentListRow, type DetailRow, type ListRow } from './present.ts';
import { scoreFilterSql } from '../scores/score-repository.ts';

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
  status?: 'ok' | 'error';
  user_id?: string[];
  session_id?: string[];
  /** any of these API keys (key ids; '' never matches: give a key) */
  api_key_id?: string[];
  /** any of these tags (repeat the parameter; commas are part of a tag) */
  tag?: string[];
  /** executions with a live score of each of these names */
  has_score?: string[];
  /** `score.<name>.gte|lte|eq` parameters (scores/score-repository.ts scoreFilterSql) */
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

interface ActivityRow {
  id: string;
  last_user?: string;
  sessions?: string;
  executions: string;
  errors: string;
  cost_usd: string;
  tokens_in: string;
  tokens_out: string;
  first_seen: string;
  last_seen: string;
}

const LIST_COLUMNS = `trace_id, agent_id, provider, model, tokens_in, tokens_out, latency_ms, toString(cost_usd) AS cost_usd_text,
  cost_source, status, started_at, length(\`tu.prompt_id\`) AS template_count, span_count, source, user_id, session_id, tags`;

/** Comma-separated or repeated values, trimmed, empty ones dropped. */
function anyOf(values: string[] | undefined): string[] | undefined {
  const out = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return out.length ? out : undefined;
}

export function encodeCursor(startedAt: string, traceId: string): string {
  return Buffer.from(JSON.stringify([startedAt, traceId])).toString('base64url');
}

function decodeCursor(cursor: string): { startedAt: string; traceId: string } {
  try {
    const [startedAt, traceId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof startedAt !== 'string' || typeof traceId !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/.test(startedAt))
      throw new Error('shape');
    return { startedAt, traceId };
  } catch {
    throw badRequest('cursor: is not a cursor returned by this endpoint');
  }
}

const EXPORT_PAGE = 5_000;
/** Raw rows a page may read into this process before the engine collapses them instead. */
const MAX_RAW_READ = 20_000;

interface RawListRow extends ListRow {
  version: string;
  sign: number | string;
}

/** The live row of each (started_at, trace_id) group among the first `end` rows, in order. */
function collapse(rows: readonly RawListRow[], end: number): ListRow[] {
  const out: ListRow[] = [];
  for (let i = 0; i < end;) {
    let j = i;
    const net = new Map<string, number>();
    let best: RawListRow | undefined;
    while (j < end && rows[j]!.started_at === rows[i]!.started_at && rows[j]!.trace_id === rows[i]!.trace_id) {
      const r = rows[j]!;
      net.set(r.version, (net.get(r.version) ?? 0) + Number(r.sign));
      j++;
    }
    for (let k = i; k < j; k++) {
      const r = rows[k]!;
      if (Number(r.sign) === 1 && net.get(r.version)! > 0 && (!best || BigInt(r.version) > BigInt(best.version))) best = r;
    }
    if (best) {
      const { version: _v, sign: _s, ...row } = best;
      out.push(row);
    }
    i = j;
  }
  return out;
}

type Waiter = { resolve: (hash: string | undefined) => void; reject: (err: unknown) => void };

/** A stored execution row as read back: every column (decimals as text). */
export type StoredExecution = Record<string, unknown> & { trace_id: string };

export interface CurrentRows {
  rows: Map<string, StoredExecution>;
  located: Set<string>;
}

/** How executions are inserted: deduplicated by the token, down to the materialized views. */
function insertSettings(dedupToken: string): ClickHouseSettings {
  return {
    insert_deduplication_token: dedupToken,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    max_partitions_per_insert_block: '1000',
    // No collapsing within the inserted block: readers use FINAL or sum(sign), and the views
    // sum with sign, so it changes no answer; it saves a sort-and-merge pass per insert.
    optimize_on_insert: 0,
  };
}

export function createExecutionRepository(ch: ClickHouseStore, opts: { maxRawRead?: number } = {}) {
  const maxRawRead = opts.maxRawRead ?? MAX_RAW_READ;
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

  /** The filter of a listing, over every row (cancel rows included: readers collapse or sum sign). */
  function where(projectId: string, q: ListQuery): { sql: string; params: Record<string, unknown> } {
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
    if (q.prompt_id) {
      parts.push('has(`tu.prompt_id`, {prompt_id:String})');
      params.prompt_id = q.prompt_id;
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
    const scored = scoreFilterSql(q as unknown as Record<string, unknown>, 'project_id');
    parts.push(...scored.parts);
    Object.assign(params, scored.params);
    return { sql: parts.join(' AND '), params };
  }

  /**
   * `take` live executions after skipping `skip`, newest first, from `after` on. Reads raw rows in
   * key order without FINAL (a time-ranged read of a few granules) and collapses them here: the
   * rows of one (started_at, trace_id) are adjacent in that order, a cancel row (sign −1) annuls
   * the row of its version, and the newest version left is the execution. A group the LIMIT may
   * have cut is read again with the next page; when cancel rows crowd the range, a larger read.
   */
  async function livePage(
    w: { sql: string; params: Record<string, unknown> },
    after: { startedAt: string; traceId: string } | undefined,
    skip: number,
    take: number,
  ): Promise<ListRow[]> {
    const cursorCondition = after ? " AND (started_at, trace_id) < (toDateTime64({c_started:String}, 3, 'UTC'), {c_trace:String})" : '';
    const params = { ...w.params, ...(after ? { c_started: after.startedAt, c_trace: after.traceId } : {}) };
    // Deep offsets, and ranges crowded with cancel rows, are collapsed by the engine (FINAL, one
    // partition at a time) rather than read into this process: memory stays bounded by the page.
    if (skip + take > maxRawRead) return finalPage(w, cursorCondition, params, skip, take);
    for (let n = skip + take + 16; ; n *= 2) {
      if (n > maxRawRead) return finalPage(w, cursorCondition, params, skip, take);
      const raw = await ch.query<RawListRow>(
        `SELECT ${LIST_COLUMNS}, version, sign FROM executions WHERE ${w.sql}${cursorCondition}
         ORDER BY started_at DESC, trace_id DESC LIMIT {n:UInt32}`,
        { ...params, n },
        'executions.list',
      );
      const complete = raw.length < n;
      let end = raw.length;
      if (!complete) {
        const last = raw[end - 1]!;
        while (end > 0 && raw[end - 1]!.started_at === last.started_at && raw[end - 1]!.trace_id === last.trace_id) end--;
      }
      const live = collapse(raw, end);
      if (live.length >= skip + take || complete) return live.slice(skip, skip + take);
    }
  }

  async function finalPage(
    w: { sql: string; params: Record<string, unknown> },
    cursorCondition: string,
    params: Record<string, unknown>,
    skip: number,
    take: number,
  ): Promise<ListRow[]> {
    return ch.query<ListRow>(
      `SELECT ${LIST_COLUMNS} FROM executions FINAL WHERE ${w.sql}${cursorCondition} AND sign = 1
       ORDER BY started_at DESC, trace_id DESC LIMIT {take:UInt32} OFFSET {skip:UInt32}
       SETTINGS do_not_merge_across_partitions_select_final = 1`,
      { ...params, take, skip },
      'executions.list.final',
    );
  }

  return {
    /** The SQL filter of a listing (project predicate first, bound parameters): the Parquet export applies the same. */
    filterOf: (projectId: string, q: Omit<ListQuery, 'limit' | 'offset' | 'cursor'>) => where(projectId, { ...q, limit: 0, offset: 0 }),

    /**
     * The SELECT of a Parquet export (src/exports/parquet-export.ts runs it with FORMAT Parquet): the live rows
     * matching a filter, newest first, in the JSON Lines columns typed, then user, session, tags,
     * metadata and the API key that sent it ('' for other credentials).
     */
    parquetSelect: (filter: { sql: string }) =>
      `SELECT trace_id, agent_id, provider, model, tokens_in, tokens_out, latency_ms, cost_usd, cost_source, status, started_at,
         CAST(notEmpty(\`tu.prompt_id\`) AS Bool) AS has_templates, toUInt32(length(\`tu.prompt_id\`)) AS template_count, span_count, source,
         user_id, session_id, tags, metadata, api_key_id${EXPORTED_DIMENSION_COLUMNS.map((c) => `, ${c}`).join('')}
       FROM executions FINAL WHERE ${filter.sql} AND sign = 1 ORDER BY started_at DESC, trace_id DESC`,

    /** Whether any execution row is stored (every project). */
    async anyStored(): Promise<boolean> {
      const [r] = await ch.query<{ n: string }>(
        'SELECT toString(count()) AS n FROM (SELECT 1 FROM executions LIMIT 1)',
        {},
        'executions.any',
      );
      return Number(r?.n ?? 0) > 0;
    },

    /**
     * Sums every stored execution into a spend rollup (schema/clickhouse/006), as its view does:
     * signed sums per project, hour and dimensions; `key` the dimension it adds (an array joined, or the API key), if any.
     */
    async aggregateIntoRollup(table: string, key: 'tag' | 'prompt_id' | 'api_key_id' | undefined): Promise<void> {
      const join =
        key === 'tag'
          ? "ARRAY JOIN if(empty(tags), [''], arrayDistinct(tags)) AS tag"
          : key === 'prompt_id'
            ? "ARRAY JOIN if(empty(`tu.prompt_id`), [''], arrayDistinct(`tu.prompt_id`)) AS prompt_id"
            : '';
      const k = key ? `${key}, ` : '';
      await ch.command(
        `INSERT INTO ${table} (project_id, ${k}hour, provider, model, agent_id, user_id, session_id, cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
         SELECT project_id, ${k}toStartOfHour(started_at, 'UTC') AS hour, provider, model, agent_id, user_id, session_id,
           sum(toDecimal128(cost_usd, 9) * sign), sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign), sum(toInt64(sign)),
           sum(if(cost_source = 'unpriced', toInt64(sign), 0))
         FROM executions ${join}
         GROUP BY project_id, ${k}hour, provider, model, agent_id, user_id, session_id`,
        {},
        { max_partitions_per_insert_block: '10000' },
      );
    },

    /**
     * Sums every stored execution into a rollup by grain (schema/clickhouse/018), as its view does:
     * signed sums per project, grain bucket and the family's columns (an array column joined once
     * per distinct value, '' for none), at each grain its table holds.
     */
    async aggregateIntoGrains(rollup: SpendRollup): Promise<void> {
      const joins = SPEND_DIMENSIONS.flatMap((d) =>
        'fromArray' in d && (rollup.columns as readonly string[]).includes(d.column)
          ? [`ARRAY JOIN if(empty(${d.fromArray.array}), [''], arrayDistinct(${d.fromArray.array})) AS ${d.column}`]
          : [],
      );
      const bucket = {
        hour: "toStartOfHour(started_at, 'UTC')",
        day: "toDateTime(toStartOfDay(started_at, 'UTC'), 'UTC')",
        month: "toDateTime(toStartOfMonth(started_at, 'UTC'), 'UTC')",
      };
      const grains = rollup.grains.map((g) => `('${g}', ${bucket[g]})`);
      const columns = rollup.columns.join(', ');
      await ch.command(
        `INSERT INTO ${rollup.table} (project_id, grain, bucket, ${columns}, cost_usd, tokens_in, tokens_out, executions, unpriced_executions)
         SELECT project_id, g.1 AS grain, g.2 AS bucket, ${columns},
           sum(toDecimal128(cost_usd, 9) * sign), sum(toInt64(tokens_in) * sign), sum(toInt64(tokens_out) * sign), sum(toInt64(sign)),
           sum(if(cost_source = 'unpriced', toInt64(sign), 0))
         FROM executions ${joins.join(' ')} ARRAY JOIN [${grains.join(', ')}] AS g
         GROUP BY project_id, grain, bucket, ${columns}`,
        {},
        { max_partitions_per_insert_block: '10000' },
      );
    },

    /** Live executions matching a filter (sum of sign: each counted once). */
    async countLive(filter: { sql: string; params: Record<string, unknown> }): Promise<number> {
      const [r] = await ch.query<{ n: string }>(
        `SELECT toString(sum(sign)) AS n FROM executions WHERE ${filter.sql}`,
        filter.params,
        'executions.count',
      );
      return Number(r?.n ?? 0);
    },
    /**
     * The stamp a score of each of these traces carries (src/scores/score-stamps.ts): its live
     * execution's version, hour and dimensions, and per distinct prompt the version and reference
     * of its first use. Traces without an execution are absent. Read from the trace index, which
     * carries the stamp (schema/clickhouse/014_execution_stamps.sql); a trace indexed before it
     * did is read from its executions row.
     */
    async scoreStamps(projectId: string, traceIds: string[]): Promise<Map<string, ExecutionStamp>> {
      if (traceIds.length === 0) return new Map();
      // Thousands of rows per score write: read as RowBinary (docs/scores.md, "Storage").
      const indexed = await ch.queryBinary<ExecutionStamp & { trace_id: string; stamped: number }>(
        `SELECT trace_id, stamped, toString(version) AS exec_version, toString(toStartOfHour(started_at, 'UTC')) AS exec_hour,
           provider AS exec_provider, model AS exec_model, agent_id AS exec_agent_id, user_id AS exec_user_id,
           session_id AS exec_session_id, prompt_ids AS exec_prompt_ids, prompt_versions AS exec_prompt_versions, prompt_refs AS exec_prompt_refs
         FROM execution_traces
         PREWHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}`,
        { p: projectId, ids: traceIds },
        'scores.stamps',
      );
      // Read without FINAL (a third less for thousands of traces) and settled here as FINAL would:
      // a trace's newest version wins (rows of one version are one execution's, alike).
      const newest = new Map<string, ExecutionStamp & { trace_id: string; stamped: number }>();
      for (const row of indexed) {
        const had = newest.get(row.trace_id);
        if (!had || BigInt(row.exec_version) > BigInt(had.exec_version)) newest.set(row.trace_id, row);
      }
      const stamps = new Map<string, ExecutionStamp>();
      const unstamped: string[] = [];
      for (const { trace_id, stamped, ...stamp } of newest.values()) {
        if (Number(stamped) === 1) stamps.set(trace_id, stamp);
        else unstamped.push(trace_id);
      }
      if (unstamped.length === 0) return stamps;
      const rows = await ch.query<ExecutionStamp & { trace_id: string }>(
        `SELECT trace_id, toString(version) AS exec_version, toString(toStartOfHour(started_at, 'UTC')) AS exec_hour,
           provider AS exec_provider, model AS exec_model, agent_id AS exec_agent_id, user_id AS exec_user_id,
           session_id AS exec_session_id, arrayDistinct(\`tu.prompt_id\`) AS exec_prompt_ids,
           arrayMap(id -> arrayFirst((v, x) -> x = id, \`tu.version\`, \`tu.prompt_id\`), exec_prompt_ids) AS exec_prompt_versions,
           arrayMap(id -> arrayFirst((r, x) -> x = id, \`tu.version_ref\`, \`tu.prompt_id\`), exec_prompt_ids) AS exec_prompt_refs
         FROM executions FINAL
         WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)} AND sign = 1
           AND (started_at, trace_id) IN (SELECT started_at, trace_id FROM execution_traces WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)})
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { p: projectId, ids: unstamped },
        'scores.stamps.unindexed',
      );
      for (const { trace_id, ...stamp } of rows) stamps.set(trace_id, stamp);
      return stamps;
    },

    /** The stored rows (latest version) of these traces, every column, exact decimals as text; and which traces the index knows. */
    async current(projectId: string, traceIds: string[]): Promise<CurrentRows> {
      const located = await ch.query<{ trace_id: string; started_at: string }>(
        'SELECT trace_id, started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids: traceIds },
        'assembly.locate',
      );
      if (located.length === 0) return { rows: new Map(), located: new Set() };
      const rows = await ch.query<StoredExecution>(
        `SELECT * REPLACE (toString(cost_usd) AS cost_usd, toString(cost_computed_usd) AS cost_computed_usd)
         FROM executions FINAL
         WHERE project_id = {p:String} AND started_at IN {starts:Array(DateTime64(3, 'UTC'))}
           AND trace_id IN {ids:Array(String)} AND sign = 1
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { p: projectId, starts: [...new Set(located.map((l) => l.started_at))], ids: located.map((l) => l.trace_id) },
        'assembly.current',
      );
      return { rows: new Map(rows.map((r) => [r.trace_id, r])), located: new Set(located.map((l) => l.trace_id)) };
    },

    /** Of these traces, the ones the trace index knows (light key reads, no FINAL). */
    async indexedTraces(projectId: string, traceIds: string[]): Promise<string[]> {
      const rows = await ch.query<{ trace_id: string }>(
        'SELECT trace_id FROM execution_traces WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids: traceIds },
        'assembly.known.executions',
      );
      return rows.map((r) => r.trace_id);
    },

    /** When each trace assembled since then was last written (every project). */
    async assembledSince(since: string): Promise<Array<{ project_id: string; trace_id: string; at: string }>> {
      return ch.query<{ project_id: string; trace_id: string; at: string }>(
        `SELECT project_id, trace_id, max(received_at) AS at FROM executions
         WHERE received_at >= toDateTime64({since:String}, 3, 'UTC') AND source = 'otlp' AND sign = 1
         GROUP BY project_id, trace_id`,
        { since },
        'assembly.recover.executions',
      );
    },

    /** Traces (every project) whose executions were written since then: the stamp sweep at start (src/scores/stamp-sweep.ts). */
    async writtenSince(since: string): Promise<Array<{ project_id: string; trace_id: string }>> {
      return ch.query<{ project_id: string; trace_id: string }>(
        `SELECT project_id, trace_id FROM executions PREWHERE received_at >= toDateTime64({since:String}, 3, 'UTC') WHERE sign = 1
         GROUP BY project_id, trace_id`,
        { since },
        'scores.sweep.executions',
      );
    },

    /**
     * Executions encoded as they are added (only their bytes kept), then written in one insert
     * (deduplicated by the token, down to the materialized views). `add` throws RowEncodeError for
     * a row no column takes, and adds nothing.
     */
    async batch(): Promise<{ add(row: object): void; readonly rows: number; insert(dedupToken: string): Promise<void> }> {
      const sink = await ch.rowSink('executions');
      return {
        add: (row) => sink.add(row),
        get rows() {
          return sink.rows;
        },
        insert: (dedupToken) => sink.send(insertSettings(dedupToken)),
      };
    },

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
      const w = where(projectId, q);
      const after = q.cursor ? decodeCursor(q.cursor) : undefined;
      const [rows, totals] = await Promise.all([
        livePage(w, after, q.offset, q.limit),
        // A cancel row repeats the values of the row it cancels, so sum(sign) over any filter
        // counts each logical execution once. Light columns only.
        ch.query<{ total: string }>(`SELECT sum(sign) AS total FROM executions WHERE ${w.sql}`, w.params, 'executions.list.total'),
      ]);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(presentListRow),
        total: Number(totals[0]?.total ?? 0),
        limit: q.limit,
        offset: q.offset,
        next_cursor: rows.length === q.limit && last ? encodeCursor(last.started_at, last.trace_id) : null,
      };
    },

    /**
     * Sessions (or users) of the window, most recently seen first: executions, errors, exact cost
     * and tokens (sums of sign, so corrections count once), first and last seen (of live and
     * superseded rows: a correction keeps its started_at). Those without an id are left out.
     */
    async activity(projectId: string, by: 'session' | 'user', q: ActivityQuery) {
      const w = where(projectId, { start: q.start, end: q.end, user_id: q.user_id, limit: 0, offset: 0 });
      const key = by === 'session' ? 'session_id' : 'user_id';
      const extra = by === 'session' ? 'argMax(user_id, started_at) AS last_user' : "uniqExactIf(session_id, session_id != '') AS sessions";
      const rows = await ch.query<ActivityRow>(
        `SELECT ${key} AS id, ${extra}, sum(sign) AS executions, sum(if(status = 'error', sign, 0)) AS errors,
           toString(sum(toDecimal128(cost_usd, 9) * sign)) AS cost_usd, sum(toInt64(tokens_in) * sign) AS tokens_in,
           sum(toInt64(tokens_out) * sign) AS tokens_out, minIf(started_at, sign = 1) AS first_seen, maxIf(started_at, sign = 1) AS last_seen
         FROM executions WHERE ${w.sql} AND ${key} != '' GROUP BY id HAVING executions > 0
         ORDER BY last_seen DESC, id LIMIT {limit:UInt32}`,
        { ...w.params, limit: q.limit },
        `executions.${by}s`,
      );
      return {
        items: rows.map((r) => ({
          [key]: r.id,
          ...(by === 'session' ? { user_id: r.last_user || null } : { sessions: Number(r.sessions) }),
          executions: Number(r.executions),
          errors: Number(r.errors),
          cost_usd: fromScaled(toScaled(r.cost_usd, NANOS), NANOS),
          tokens_in: Number(r.tokens_in),
          tokens_out: Number(r.tokens_out),
          first_seen: fromClickHouseTime(r.first_seen),
          last_seen: fromClickHouseTime(r.last_seen),
        })),
        limit: q.limit,
      };
    },

    /**
     * Every matching execution, newest first, as a stream of list items: keyset pages of live
     * rows, so memory stays flat whatever the count (and the same code serves both store modes).
     */
    async *export(
      projectId: string,
      q: Omit<ListQuery, 'limit' | 'offset' | 'cursor'>,
    ): AsyncGenerator<ReturnType<typeof presentListItem>> {
      const w = where(projectId, { ...q, limit: 0, offset: 0 });
      let after: { startedAt: string; traceId: string } | undefined;
      for (;;) {
        const rows = await livePage(w, after, 0, EXPORT_PAGE);
        for (const row of rows) yield presentListItem(row);
        const last = rows[rows.length - 1];
        if (rows.length < EXPORT_PAGE || !last) return;
        after = { startedAt: last.started_at, traceId: last.trace_id };
      }
    },

    /**
     * The trace ids of the executions matching a filter whose current row arrived (was stored:
     * `received_at`, the service's clock) at or after `since`, whatever their `started_at` (a
     * client's clock, possibly long before), in trace id pages. A trace's newest row in the window
     * decides (its cancel row first at a tie: a cancelled execution is not listed); a filter field
     * changed by a correction is judged on the correction. `idx_received_at` (017) skips the
     * granules written before the window.
     */
    async *arrivedSince(
      projectId: string,
      q: Omit<ListQuery, 'limit' | 'offset' | 'cursor' | 'start' | 'end'>,
      since: Date,
    ): AsyncGenerator<string> {
      const w = where(projectId, { ...q, limit: 0, offset: 0 });
      for (let after = ''; ;) {
        const rows = await ch.query<{ trace_id: string }>(
          `SELECT trace_id FROM executions
           WHERE project_id = {project_id:String} AND received_at >= toDateTime64({since:String}, 3, 'UTC') AND trace_id > {after:String}
           GROUP BY trace_id HAVING argMax(sign = 1 AND ${w.sql}, (version, -sign))
           ORDER BY trace_id LIMIT {n:UInt32}`,
          { ...w.params, since: toClickHouseTime(since), after, n: EXPORT_PAGE },
          'executions.arrivedSince',
        );
        for (const r of rows) yield r.trace_id;
        if (rows.length < EXPORT_PAGE) return;
        after = rows[rows.length - 1]!.trace_id;
      }
    },

    /**
     * The live executions of these traces (light columns; the conversation too with `withMessages`),
     * found through the trace index; a trace not assembled yet is simply absent.
     */
    async ofTraces(
      projectId: string,
      traceIds: string[],
      withMessages: boolean,
    ): Promise<Array<ListRow & { conversation_history?: string }>> {
      if (traceIds.length === 0) return [];
      const located = await ch.query<{ started_at: string }>(
        'SELECT DISTINCT started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids: traceIds },
        'executions.ofTraces.locate',
      );
      if (located.length === 0) return [];
      return ch.query<ListRow & { conversation_history?: string }>(
        `SELECT ${LIST_COLUMNS}${withMessages ? ', conversation_history' : ''} FROM executions FINAL
         WHERE project_id = {p:String} AND started_at IN {starts:Array(DateTime64(3, 'UTC'))} AND trace_id IN {ids:Array(String)} AND sign = 1
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { p: projectId, starts: located.map((l) => l.started_at), ids: traceIds },
        'executions.ofTraces',
      );
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
           toString(cost_computed_usd) AS cost_computed_text, price_id, usage_warnings, session_id, user_id, tags, metadata,
           \`tu.prompt_id\` AS tu_prompt_id, \`tu.version\` AS tu_version, \`tu.version_ref\` AS tu_version_ref, \`tu.role\` AS tu_role,
           \`tu.source\` AS tu_source, \`tu.message_index\` AS tu_message_index, template_inputs, api_key_id, environment
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

export type ExecutionRepository = ReturnType<typeof createExecutionRepository>;

// ---- Repricing (src/spend/reprice.ts): the live rows a reprice scope covers, read in keyset
// pages, and the corrections it writes (cancel row + new version, as the ledger always does).

/** The executions a reprice covers: started in [from, to), optionally of one provider and/or model. */
export interface RepriceScope {
  provider?: string;
  model?: string;
  from: Date;
  to: Date;
}

/** A live execution row; `cost_usd` and `cost_computed_usd` as exact text. Full rows carry every column. */
export type LedgerRow = Record<string, unknown> & {
  started_at: string;
  trace_id: string;
  version: string | number;
  /** `api` (a direct record) or `otlp` (assembled from spans). */
  source: string;
  provider: string;
  model: string;
  tokens_in: string;
  tokens_out: string;
  tokens_cached_in: string;
  tokens_cache_write_in: string;
  tokens_reasoning: string;
  cost_usd: string;
  cost_source: string;
  cost_computed_usd: string | null;
  price_id: string;
};

const LIGHT = `started_at, trace_id, version, source, provider, model, tokens_in, tokens_out, tokens_cached_in, tokens_cache_write_in, tokens_reasoning,
  toString(cost_usd) AS cost_usd, cost_source, toString(cost_computed_usd) AS cost_computed_usd, price_id`;
const FULL = '* REPLACE (toString(cost_usd) AS cost_usd, toString(cost_computed_usd) AS cost_computed_usd)';

/**
 * Direct records whose cost the service computed (or could not: unpriced) — a provided cost is
 * what the caller paid, never repriced — and OTLP executions, priced again span by span by
 * assembling their trace again (docs/spend.md, "Repricing").
 */
function repriceScopeWhere(projectId: string, s: RepriceScope) {
  const parts = [
    'project_id = {p:String}',
    "started_at >= toDateTime64({from:String}, 3, 'UTC')",
    "started_at < toDateTime64({to:String}, 3, 'UTC')",
    "((source = 'api' AND cost_source != 'provided') OR source = 'otlp')",
  ];
  const params: Record<string, unknown> = { p: projectId, from: toClickHouseTime(s.from), to: toClickHouseTime(s.to) };
  if (s.provider !== undefined) {
    parts.push('provider = {provider:String}');
    params.provider = s.provider;
  }
  if (s.model !== undefined) {
    parts.push('model = {model:String}');
    params.model = s.model;
  }
  return { sql: parts.join(' AND '), params };
}

export function createRepriceLedger(ch: ClickHouseStore) {
  return {
    /** Live executions in scope (sum of sign: each counted once). */
    async count(projectId: string, s: RepriceScope): Promise<bigint> {
      const w = repriceScopeWhere(projectId, s);
      const [r] = await ch.query<{ n: string }>(
        `SELECT toString(sum(sign)) AS n FROM executions WHERE ${w.sql}`,
        w.params,
        'reprice.count',
      );
      return BigInt(r?.n ?? 0);
    },
    /**
     * The live rows among the next `n` raw rows after `after` (started_at, trace_id), in key order,
     * and the key the page ended at (undefined at the end of the scope). The raw keys are read in
     * order without FINAL (a LIMIT that stops early); the live rows are then collapsed (FINAL) within
     * that key range only, so each page costs its own range, not the rest of the scope.
     */
    async page(
      projectId: string,
      s: RepriceScope,
      after: { startedAt: string; traceId: string } | undefined,
      n: number,
      full: boolean,
    ): Promise<{ rows: LedgerRow[]; end?: { startedAt: string; traceId: string } }> {
      const w = repriceScopeWhere(projectId, s);
      const cursor = after ? " AND (started_at, trace_id) > (toDateTime64({c_started:String}, 3, 'UTC'), {c_trace:String})" : '';
      const params = { ...w.params, n, ...(after ? { c_started: after.startedAt, c_trace: after.traceId } : {}) };
      const keys = await ch.query<{ started_at: string; trace_id: string }>(
        `SELECT started_at, trace_id FROM executions WHERE ${w.sql}${cursor} ORDER BY started_at, trace_id LIMIT {n:UInt32}`,
        params,
        'reprice.keys',
      );
      const last = keys[keys.length - 1];
      if (!last) return { rows: [] };
      const rows = await ch.query<LedgerRow>(
        `SELECT ${full ? FULL : LIGHT} FROM executions FINAL
         WHERE ${w.sql}${cursor} AND (started_at, trace_id) <= (toDateTime64({e_started:String}, 3, 'UTC'), {e_trace:String}) AND sign = 1
         ORDER BY started_at, trace_id
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { ...params, e_started: last.started_at, e_trace: last.trace_id },
        full ? 'reprice.page' : 'reprice.page.light',
      );
      return { rows, end: { startedAt: last.started_at, traceId: last.trace_id } };
    },
    /** Corrections: each a cancel row and its new version, in one insert. */
    async write(rows: object[]): Promise<void> {
      if (rows.length) await ch.insert('executions', rows, { max_partitions_per_insert_block: '1000' });
    },
  };
}

export type RepriceLedger = ReturnType<typeof createRepriceLedger>;

/** The executions' part of a spend breakdown: the ledger's rows summed by sign, arrays joined or filtered in place. */
const EXECUTIONS_BREAKDOWN: BreakdownSourceSql = {
  from: 'FROM executions',
  hour: "toStartOfHour(started_at, 'UTC')",
  measures: `sum(toDecimal128(cost_usd, 9) * sign) AS c, sum(toInt64(sign)) AS n, sum(toInt64(tokens_in) * sign) AS ti,
    sum(toInt64(tokens_out) * sign) AS tout, sum(if(cost_source = 'unpriced', toInt64(sign), 0)) AS u`,
  ...EXECUTIONS_ARRAYS,
};

/** Spend breakdowns no rollup serves (metadata, tag × prompt, several tags), read from the executions ledger. */
export function createExecutionBreakdowns(ch: ClickHouseStore) {
  return {
    async breakdown(r: BreakdownRead): Promise<BreakdownRow[]> {
      const q = breakdownSql(r, EXECUTIONS_BREAKDOWN);
      return ch.query<BreakdownRow>(q.text, q.params, 'spend.breakdown.executions');
    },
    /** The live executions of a breakdown, each with its group values (`trace_id, g0, ...`): what its scores join. */
    keys: (r: BreakdownRead) => breakdownKeysSql(r, { ...EXECUTIONS_BREAKDOWN, from: 'FROM executions FINAL', live: 'sign = 1' }),
  };
}

/** How executions of one prompt are grouped for a comparison: by the version used, or by the reference (a label) it was fetched by. */
export type PromptGroupBy = 'version' | 'label';

/**
 * The live executions of prompt `{cmp_prompt}` in project `{cmp_p}` started in
 * [`{cmp_start}`, `{cmp_end}`), each with its group (the prompt's version it used, as text, or the
 * reference it was fetched by), among `{cmp_groups}`: `trace_id, grp, cost_usd, latency_ms,
 * tokens_in, tokens_out`. The query the scores of a comparison join (scores/score-repository.ts).
 */
export function promptGroupRowsSql(by: PromptGroupBy): string {
  const key =
    by === 'version'
      ? 'toString(arrayFirst((x, id) -> id = {cmp_prompt:String}, `tu.version`, `tu.prompt_id`))'
      : 'arrayFirst((x, id) -> id = {cmp_prompt:String}, `tu.version_ref`, `tu.prompt_id`)';
  const window = `project_id = {cmp_p:String}
        AND started_at >= toDateTime64({cmp_start:String}, 3, 'UTC') AND started_at < toDateTime64({cmp_end:String}, 3, 'UTC')`;
  // The live rows without FINAL (which merges every part of the window, most of this read's
  // time): a row is live when no cancel row repeats its trace and version. Cancel rows are few
  // (merges collapse them with their rows), so their keys are read first, sign alone.
  return `SELECT trace_id, grp, cost_usd, latency_ms, tokens_in, tokens_out FROM (
      SELECT trace_id, cost_usd, latency_ms, tokens_in, tokens_out, ${key} AS grp
      FROM executions
      WHERE ${window} AND has(\`tu.prompt_id\`, {cmp_prompt:String}) AND sign = 1
        AND (trace_id, version) NOT IN (SELECT trace_id, version FROM executions PREWHERE ${window} AND sign = -1))
    WHERE grp IN {cmp_groups:Array(String)}`;
}

export interface PromptGroupCosts {
  grp: string;
  executions: string;
  cost: string;
  cost_var: number | null;
  cost_q: number[];
  latency_q: number[];
  tokens_in: string;
  tokens_out: string;
}

/** Per group of a prompt's executions: count, exact total cost, the variance and quantiles of cost per execution, latency quantiles, tokens. */
export async function promptGroupCosts(
  ch: ClickHouseStore,
  by: PromptGroupBy,
  params: Record<string, unknown>,
): Promise<PromptGroupCosts[]> {
  return ch.query<PromptGroupCosts>(
    `SELECT grp, toString(count()) AS executions, toString(sum(cost_usd)) AS cost, varSamp(toFloat64(cost_usd)) AS cost_var,
       quantilesExactInclusive(0.5, 0.95)(toFloat64(cost_usd)) AS cost_q, quantilesExactInclusive(0.5, 0.95)(toFloat64(latency_ms)) AS latency_q,
       toString(sum(tokens_in)) AS tokens_in, toString(sum(tokens_out)) AS tokens_out
     FROM (${promptGroupRowsSql(by)}) GROUP BY grp`,
    params,
    'quality.compare.costs',
  );
}
