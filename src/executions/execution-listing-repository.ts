// The executions listing (GET …/executions, its total, export, sessions and users, what
// evaluators scan): live rows of a filter, newest first, read without FINAL where a page allows
// and settled by the one collapse rule (stores/live-rows.ts). Light columns only: never messages
// or template inputs.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { liveRows } from '../stores/live-rows.ts';
import { badRequest } from '../errors.ts';
import { timeRange, toClickHouseTime } from '../time.ts';
import { EXPORTED_DIMENSION_COLUMNS } from '../reads/spend-dimensions.ts';
import { presentActivity, type ActivityRow } from './session-list-repository.ts';
import { presentListItem, presentListRow, type ListRow } from './present.ts';
import {
  decodeCursor,
  encodeCursor,
  executionFilter,
  LIST_COLUMNS,
  activityFilter,
  type ActivityQuery,
  type ExecutionFilter,
  type ListQuery,
  type ScoreFilter,
} from './execution-filter.ts';
import { createValueSortedPage } from './execution-sort-repository.ts';
import { withKeyNames, type KeyNames } from './key-names.ts';

/** Each trace's latest live value of each name it has a score of, by trace id. */
export type LatestScores = (
  projectId: string,
  traceIds: string[],
  names: string[],
) => Promise<Map<string, Record<string, number | boolean | string>>>;

const EXPORT_PAGE = 5_000;
/** Raw rows a page may read into this process before the engine collapses them instead. */
const MAX_RAW_READ = 20_000;
/** The newest rows a page of sessions or users reads first to find who was seen last (grown ×8 while too few). */
const ACTIVITY_SCAN = 20_000;
/** The ids of those rows a page takes beyond its length (grown ×4 while ids netting to none leave it short). */
const ACTIVITY_SPARE = 16;
const DAY_MS = 86_400_000;

interface RawListRow extends ListRow {
  version: string;
  sign: number | string;
}

const listRow = ({ version: _v, sign: _s, ...row }: RawListRow): ListRow => row;

/**
 * A list's total as the spend rollups hold it (src/spend/list-totals.ts): the executions they
 * count, and the ranges of the window left to count over the executions rows; undefined when no
 * rollup holds the filter.
 */
export type RollupTotal = (
  projectId: string,
  q: ListQuery,
) => Promise<{ executions: number; rest: Array<{ start?: string; end?: string }> } | undefined>;

/** `scoreFilter`: the SQL of score parameters (scores/score-repository.ts scoreFilterSql). */
export function createExecutionListing(
  ch: ClickHouseStore,
  opts: {
    scoreFilter: ScoreFilter;
    maxRawRead?: number;
    activityScan?: number;
    activitySpare?: number;
    rollupTotal?: RollupTotal;
    /** The latest live value of each of these score names on each of these traces (scores/score-repository.ts latestOf). */
    latestScores?: LatestScores;
    /** The time from which retention has removed none of a project's executions (src/spend/retention.ts), if it ever removed any. */
    intactSince?: (projectId: string) => Promise<number | undefined>;
    /** The names of a page's API keys (PostgreSQL); without it a list item's api_key_name is null. */
    keyNames?: KeyNames;
  },
) {
  const { scoreFilter } = opts;
  const maxRawRead = opts.maxRawRead ?? MAX_RAW_READ;
  const activityScan = opts.activityScan ?? ACTIVITY_SCAN;
  const activitySpare = opts.activitySpare ?? ACTIVITY_SPARE;

  /**
   * The users page's figures of `ids` over the window: the whole UTC days inside it from
   * `user_days` (schema/clickhouse/026, 027: a row per user and day, in user order), the partial
   * days at its ends from the executions rows; the same sums, first and last seen and signed count
   * per session as a sum over the window's rows gives.
   */
  async function userFigures(projectId: string, q: ActivityQuery, ids: string[]): Promise<ActivityRow[]> {
    const range = timeRange(q.start, q.end);
    const at = (t: string | undefined) => (t === undefined ? undefined : Date.parse(`${t.replace(' ', 'T')}Z`));
    const [s, e] = [at(range.start), at(range.end)];
    const dayAfter = (t: number) => Math.ceil(t / DAY_MS) * DAY_MS;
    // The user days outlive retention: days it may have cut are read from what is left of the executions.
    const intact = await opts.intactSince?.(projectId);
    const d0s = [s, intact].filter((t) => t !== undefined).map(dayAfter);
    const d0 = d0s.length ? Math.max(...d0s) : undefined;
    const d1 = e === undefined ? undefined : Math.floor(e / DAY_MS) * DAY_MS;
    // No whole day inside: every row from the executions.
    const days = d0 === undefined || d1 === undefined || d0 < d1;
    const edges: Array<[number | undefined, number | undefined]> = !days
      ? [[s, e]]
      : [
          ...(d0 !== undefined && (s === undefined || s < d0) ? [[s, d0] as [number | undefined, number]] : []),
          ...(d1 !== undefined && (e === undefined || d1 < e) ? [[d1, e] as [number, number | undefined]] : []),
        ];
    const params: Record<string, unknown> = { p: projectId, ids };
    const parts: string[] = [];
    if (days) {
      const bounds = [
        ...(d0 !== undefined ? ['day >= toDate({d0:String})'] : []),
        ...(d1 !== undefined ? ['day < toDate({d1:String})'] : []),
      ];
      if (d0 !== undefined) params.d0 = new Date(d0).toISOString().slice(0, 10);
      if (d1 !== undefined) params.d1 = new Date(d1).toISOString().slice(0, 10);
      parts.push(
        `SELECT user_id AS id, sum(executions) AS n, sum(errors) AS er, sum(cost_usd) AS c, sum(tokens_in) AS ti, sum(tokens_out) AS tout,
           min(first_seen) AS f, max(last_seen) AS l, sumMap(session_nets) AS ss
         FROM user_days WHERE ${['project_id = {p:String}', 'user_id IN {ids:Array(String)}', ...bounds].join(' AND ')} GROUP BY id`,
      );
    }
    const spans = edges.map(([from, to], i) => {
      if (from !== undefined) params[`ef${i}`] = toClickHouseTime(new Date(from));
      if (to !== undefined) params[`et${i}`] = toClickHouseTime(new Date(to));
      const b = [
        ...(from !== undefined ? [`started_at >= toDateTime64({ef${i}:String}, 3, 'UTC')`] : []),
        ...(to !== undefined ? [`started_at < toDateTime64({et${i}:String}, 3, 'UTC')`] : []),
      ];
      return `(${b.length ? b.join(' AND ') : '1'})`;
    });
    if (spans.length)
      parts.push(
        `SELECT user_id AS id, sum(toInt64(sign)) AS n, sum(if(status = 'error', toInt64(sign), 0)) AS er,
           sum(toDecimal128(cost_usd, 9) * sign) AS c, sum(toInt64(tokens_in) * sign) AS ti, sum(toInt64(tokens_out) * sign) AS tout,
           minIfOrNull(started_at, sign = 1) AS f, maxIfOrNull(started_at, sign = 1) AS l, sumMap(map(session_id, toInt64(sign))) AS ss
         FROM executions WHERE project_id = {p:String} AND user_id IN {ids:Array(String)} AND (${spans.join(' OR ')}) GROUP BY id`,
      );
    // A user's sessions: the ids other than '' whose executions in the window net to more than none.
    return ch.query<ActivityRow>(
      `SELECT id, toString(arrayCount((s, k) -> s != '' AND k > 0, mapKeys(nets), mapValues(nets))) AS sessions, executions, errors,
         cost_usd, tokens_in, tokens_out, first_seen, last_seen
       FROM (
         SELECT id, sumMap(ss) AS nets, sum(n) AS executions, sum(er) AS errors, toString(sum(c)) AS cost_usd,
           sum(ti) AS tokens_in, sum(tout) AS tokens_out, min(f) AS first_seen, max(l) AS last_seen
         FROM (${parts.join(' UNION ALL ')}) GROUP BY id HAVING executions > 0)`,
      params,
      'executions.users.figures',
    );
  }

  /**
   * `take` live executions after skipping `skip`, newest first (`asc`: oldest first), from `after`
   * on. Reads raw rows in key order without FINAL (a time-ranged read of a few granules) and
   * collapses them here: the rows of one (started_at, trace_id) are adjacent in that order, a
   * cancel row (sign −1) annuls the row of its version, and the newest version left is the
   * execution. A group the LIMIT may have cut is read again with the next page; when cancel rows
   * crowd the range, a larger read.
   */
  async function livePage(
    w: ExecutionFilter,
    after: { startedAt: string; traceId: string } | undefined,
    skip: number,
    take: number,
    order: 'asc' | 'desc' = 'desc',
  ): Promise<ListRow[]> {
    const [cmp, dir] = order === 'desc' ? ['<', 'DESC'] : ['>', 'ASC'];
    const cursorCondition = after
      ? ` AND (started_at, trace_id) ${cmp} (toDateTime64({c_started:String}, 3, 'UTC'), {c_trace:String})`
      : '';
    const params = { ...w.params, ...(after ? { c_started: after.startedAt, c_trace: after.traceId } : {}) };
    const orderBy = `started_at ${dir}, trace_id ${dir}`;
    // Deep offsets, and ranges crowded with cancel rows, are collapsed by the engine (FINAL, one
    // partition at a time) rather than read into this process: memory stays bounded by the page.
    if (skip + take > maxRawRead) return finalPage(w, cursorCondition, orderBy, params, skip, take);
    for (let n = skip + take + 16; ; n *= 2) {
      if (n > maxRawRead) return finalPage(w, cursorCondition, orderBy, params, skip, take);
      const raw = await ch.query<RawListRow>(
        `SELECT ${LIST_COLUMNS}, version, sign FROM executions WHERE ${w.sql}${cursorCondition}
         ORDER BY ${orderBy} LIMIT {n:UInt32}`,
        { ...params, n },
        'executions.list',
      );
      const complete = raw.length < n;
      let end = raw.length;
      if (!complete) {
        const last = raw[end - 1]!;
        while (end > 0 && raw[end - 1]!.started_at === last.started_at && raw[end - 1]!.trace_id === last.trace_id) end--;
      }
      const live = [...liveRows(raw.slice(0, end), (r) => `${r.started_at}\u0000${r.trace_id}`).values()].map(listRow);
      if (live.length >= skip + take || complete) return live.slice(skip, skip + take);
    }
  }

  async function finalPage(
    w: ExecutionFilter,
    cursorCondition: string,
    orderBy: string,
    params: Record<string, unknown>,
    skip: number,
    take: number,
  ): Promise<ListRow[]> {
    return ch.query<ListRow>(
      `SELECT ${LIST_COLUMNS} FROM executions FINAL WHERE ${w.sql}${cursorCondition} AND sign = 1
       ORDER BY ${orderBy} LIMIT {take:UInt32} OFFSET {skip:UInt32}
       SETTINGS do_not_merge_across_partitions_select_final = 1`,
      { ...params, take, skip },
      'executions.list.final',
    );
  }

  const valuePage = createValueSortedPage(ch, maxRawRead);

  return {
    /** The SQL filter of a listing (project predicate first, bound parameters): the Parquet export applies the same. */
    filterOf: (projectId: string, q: Omit<ListQuery, 'limit' | 'offset' | 'cursor'>) =>
      executionFilter(projectId, { ...q, limit: 0, offset: 0 }, scoreFilter),

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

    /** Live executions matching a filter (sum of sign: each counted once). */
    async countLive(filter: ExecutionFilter): Promise<number> {
      const [r] = await ch.query<{ n: string }>(
        `SELECT toString(sum(sign)) AS n FROM executions WHERE ${filter.sql}`,
        filter.params,
        'executions.count',
      );
      return Number(r?.n ?? 0);
    },

    async list(projectId: string, q: ListQuery) {
      if (q.cursor && q.offset > 0) throw badRequest('offset: cannot be combined with cursor');
      const sort = q.sort ?? 'started_at';
      const order = q.order ?? 'desc';
      const w = executionFilter(projectId, q, scoreFilter);
      const after = q.cursor ? decodeCursor(q.cursor, sort, order) : undefined;
      // A cancel row repeats the values of the row it cancels, so sum(sign) over any filter counts
      // each logical execution once. Light columns only. The whole hours a rollup holds are counted there.
      const count = (f: ExecutionFilter) =>
        ch.query<{ total: string }>(`SELECT sum(sign) AS total FROM executions WHERE ${f.sql}`, f.params, 'executions.list.total');
      const total = async () => {
        const held = await opts.rollupTotal?.(projectId, q);
        if (!held) return Number((await count(w))[0]?.total ?? 0);
        const rest = await Promise.all(
          held.rest.map((r) => count(executionFilter(projectId, { ...q, start: r.start, end: r.end }, scoreFilter))),
        );
        return rest.reduce((n, [r]) => n + Number(r?.total ?? 0), held.executions);
      };
      const page = async (): Promise<Array<ListRow & { sort_key?: string }>> =>
        sort === 'started_at' ? livePage(w, after, q.offset, q.limit, order) : valuePage(w, sort, order, after, q.offset, q.limit);
      const [rows, totalCount] = await Promise.all([page(), total()]);
      const names = [
        ...new Set(
          (q.scores ?? [])
            .flatMap((n) => n.split(','))
            .map((n) => n.trim())
            .filter(Boolean),
        ),
      ];
      // The page's latest scores (ClickHouse) and its keys' names (PostgreSQL), side by side.
      const [scores, named] = await Promise.all([
        names.length && opts.latestScores
          ? opts.latestScores(
              projectId,
              rows.map((r) => r.trace_id),
              names,
            )
          : undefined,
        withKeyNames(opts.keyNames ?? (async () => new Map()), projectId, rows.map(presentListRow)),
      ]);
      const last = rows[rows.length - 1];
      return {
        items: named.map((item) => ({
          ...item,
          ...(names.length ? { scores: Object.fromEntries(names.map((n) => [n, scores?.get(item.trace_id)?.[n] ?? null])) } : {}),
        })),
        total: totalCount,
        limit: q.limit,
        offset: q.offset,
        next_cursor:
          rows.length === q.limit && last
            ? encodeCursor({ key: last.sort_key ?? '', startedAt: last.started_at, traceId: last.trace_id }, sort, order)
            : null,
      };
    },

    /**
     * Sessions (or users) of the window, most recently seen first: executions, errors, exact cost
     * and tokens (sums of sign, so corrections count once), first and last seen (of live and
     * superseded rows: a correction keeps its started_at). Those without an id are left out.
     *
     * Two reads, so that a page costs what its ids cost, not what every id of the window does.
     * First the newest `sign = 1` rows of the window, in key order (a few granules): an id's last
     * seen is the time of its newest such row, so every id seen after the oldest row read is
     * found there, in its place; only the first of them (the page's length and 16 more) cross to
     * this process (20,000 ids of a month of 100,000 users cost ~100 ms to carry). Then the figures
     * of those ids, each a plain sum over its rows (its bloom filter skips the rest); ids whose
     * executions net to none are dropped and the next ones taken, four times as many ids when
     * those run out. When the rows read hold too few ids, eight times as many are read, until the
     * window is read whole.
     */
    async activity(projectId: string, by: 'session' | 'user', q: ActivityQuery) {
      const w = activityFilter(projectId, by, q, scoreFilter);
      const key = by === 'session' ? 'session_id' : 'user_id';
      // A later page of sessions is the first pages' rows and its own, taken in the same order.
      const skip = by === 'session' ? (q.offset ?? 0) : 0;
      const want = skip + q.limit;
      const figures = (ids: string[]) =>
        by === 'user'
          ? userFigures(projectId, q, ids)
          : ch.query<ActivityRow>(
              `SELECT session_id AS id, argMax(user_id, started_at) AS last_user, sum(sign) AS executions, sum(if(status = 'error', sign, 0)) AS errors,
             toString(sum(toDecimal128(cost_usd, 9) * sign)) AS cost_usd, sum(toInt64(tokens_in) * sign) AS tokens_in,
             sum(toInt64(tokens_out) * sign) AS tokens_out, minIf(started_at, sign = 1) AS first_seen, maxIf(started_at, sign = 1) AS last_seen
           FROM executions WHERE ${w.sql} AND ${key} IN {ids:Array(String)} GROUP BY id HAVING executions > 0`,
              { ...w.params, ids },
              `executions.${by}s`,
            );
      const items: ActivityRow[] = [];
      for (let scan = activityScan; ; scan *= 8) {
        items.length = 0;
        let recent: Array<{ id: string; complete: number; whole: number }> = [];
        // The first `ids` ids of the newest rows, complete ones first, by their newest row; those seen
        // after the oldest row read are complete. Only what a page can use crosses to this process.
        for (let ids = want + activitySpare, used = 0; ; ids *= 4) {
          recent = await ch.query<{ id: string; complete: number; whole: number }>(
            `SELECT id, last > oldest OR read < {scan:UInt32} AS complete, read < {scan:UInt32} AS whole FROM (
               SELECT ${key} AS id, max(started_at) AS last, any(o) AS oldest, any(n) AS read FROM (
                 SELECT ${key}, started_at, min(started_at) OVER () AS o, count() OVER () AS n FROM (
                   SELECT ${key}, started_at FROM executions WHERE ${w.sql} AND ${key} != '' AND sign = 1
                   ORDER BY started_at DESC LIMIT {scan:UInt32}))
               GROUP BY id)
             ORDER BY complete DESC, last DESC, id LIMIT {ids:UInt32}`,
            { ...w.params, scan, ids },
            `executions.${by}s.recent`,
          );
          const complete = recent.filter((r) => Number(r.complete) === 1).map((r) => r.id);
          // The same order with more ids: those already summed are a prefix of it.
          while (used < complete.length && items.length < want) {
            const page = complete.slice(used, used + want - items.length);
            used += page.length;
            items.push(...(await figures(page)));
          }
          // Enough, or every complete id was returned.
          if (items.length >= want || recent.length < ids || complete.length < recent.length) break;
        }
        // Enough, or the window was read whole (no id is left to find).
        if (items.length >= want || recent.length === 0 || Number(recent[0]!.whole) === 1) break;
      }
      items.sort((a, b) => (a.last_seen === b.last_seen ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.last_seen < b.last_seen ? 1 : -1));
      return { items: items.slice(skip, want).map((r) => presentActivity(by, r)), limit: q.limit };
    },

    /**
     * Every matching execution, newest first, as a stream of list items: keyset pages of live
     * rows, so memory stays flat whatever the count (and the same code serves both store modes).
     */
    async *export(
      projectId: string,
      q: Omit<ListQuery, 'limit' | 'offset' | 'cursor'>,
    ): AsyncGenerator<ReturnType<typeof presentListItem>> {
      const w = executionFilter(projectId, { ...q, limit: 0, offset: 0 }, scoreFilter);
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
      const w = executionFilter(projectId, { ...q, limit: 0, offset: 0 }, scoreFilter);
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
  };
}

export type ExecutionListing = ReturnType<typeof createExecutionListing>;
