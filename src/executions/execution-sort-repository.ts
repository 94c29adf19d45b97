// A page of the executions listing ordered by a value (cost, latency, tokens) rather than time
// (docs/executions.md "Order"): keyset on (value, started_at, trace_id), exact through corrections.
//
// What it reads. The first read is a top-N over the filter's rows (the time window's granules,
// narrowed by the filter's indexes): only the sort column, the key, version and sign (and the
// filter's own columns) are read, the engine keeps the N best rows (a heap, not a sort of the
// window), and N is the page plus a margin. No FINAL. The second read fetches the page's rows by
// primary key (their started_at and trace ids: a few granules) with the list's light columns.
//
// Why two reads settle versions exactly: a cancel row repeats the row it cancels, value included,
// so the two are adjacent in this order and annul each other in code (stores/live-rows.ts); a row
// left is a candidate. A candidate is listed only when it is its trace's live row (the second
// read holds every version of its trace): a superseded version nobody cancelled, whose newer
// version has another value, is dropped here and its live version listed at its own place.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { liveRows } from '../stores/live-rows.ts';
import type { ListRow } from './present.ts';
import { LIST_COLUMNS, SORT_EXPRESSIONS, type ExecutionFilter, type ListCursor, type ListSort } from './execution-filter.ts';

interface Candidate {
  sort_key: string;
  started_at: string;
  trace_id: string;
  version: string;
  sign: number | string;
}

export type SortedRow = ListRow & { sort_key: string };

export function createValueSortedPage(ch: ClickHouseStore, maxRawRead: number) {
  return async function valuePage(
    w: ExecutionFilter,
    sort: Exclude<ListSort, 'started_at'>,
    order: 'asc' | 'desc',
    after: ListCursor | undefined,
    skip: number,
    take: number,
  ): Promise<SortedRow[]> {
    const { sql: expr, bound } = SORT_EXPRESSIONS[sort];
    const [cmp, dir] = order === 'desc' ? ['<', 'DESC'] : ['>', 'ASC'];
    const cursorCondition = after
      ? ` AND (${expr}, started_at, trace_id) ${cmp} (${bound}, toDateTime64({c_started:String}, 3, 'UTC'), {c_trace:String})`
      : '';
    const params = { ...w.params, ...(after ? { c_key: after.key, c_started: after.startedAt, c_trace: after.traceId } : {}) };
    const orderBy = `${expr} ${dir}, started_at ${dir}, trace_id ${dir}`;

    if (skip + take <= maxRawRead)
      for (let n = skip + take + 16; n <= maxRawRead; n *= 2) {
        const raw = await ch.query<Candidate>(
          `SELECT toString(${expr}) AS sort_key, started_at, trace_id, toString(version) AS version, sign
           FROM executions WHERE ${w.sql}${cursorCondition} ORDER BY ${orderBy}, version ${dir}, sign LIMIT {n:UInt32}`,
          { ...params, n },
          `executions.list.by_${sort}`,
        );
        const complete = raw.length < n;
        let end = raw.length;
        if (!complete) {
          // The last row's group (a row and its cancel row) may be cut by the LIMIT: read it with the next page.
          const l = raw[end - 1]!;
          const same = (r: Candidate) => r.sort_key === l.sort_key && r.started_at === l.started_at && r.trace_id === l.trace_id;
          while (end > 0 && same(raw[end - 1]!)) end--;
        }
        const candidates = [...liveRows(raw.slice(0, end), (r) => `${r.sort_key}\u0000${r.started_at}\u0000${r.trace_id}`).values()];
        const rows: SortedRow[] = [];
        for (let i = 0; rows.length < skip + take && i < candidates.length;) {
          const next = candidates.slice(i, i + skip + take - rows.length);
          i += next.length;
          rows.push(...(await confirmed(w, sort, next)));
        }
        if (rows.length >= skip + take || complete) return rows.slice(skip, skip + take);
      }
    // A deep offset, or a range crowded with cancel rows: the engine collapses (FINAL, a partition at a time).
    return ch.query<SortedRow>(
      `SELECT ${LIST_COLUMNS}, toString(${expr}) AS sort_key FROM executions FINAL WHERE ${w.sql}${cursorCondition} AND sign = 1
       ORDER BY ${orderBy} LIMIT {take:UInt32} OFFSET {skip:UInt32}
       SETTINGS do_not_merge_across_partitions_select_final = 1`,
      { ...params, take, skip },
      `executions.list.by_${sort}.final`,
    );
  };

  /** The candidates that are their trace's live row, in their order, with the list's columns. */
  async function confirmed(w: ExecutionFilter, sort: Exclude<ListSort, 'started_at'>, candidates: Candidate[]): Promise<SortedRow[]> {
    if (candidates.length === 0) return [];
    const rows = await ch.query<SortedRow & { version: string; sign: number | string }>(
      `SELECT ${LIST_COLUMNS}, toString(${SORT_EXPRESSIONS[sort].sql}) AS sort_key, toString(version) AS version, sign FROM executions
       WHERE project_id = {project_id:String} AND started_at IN {starts:Array(DateTime64(3, 'UTC'))} AND trace_id IN {ids:Array(String)}`,
      {
        project_id: w.params.project_id,
        starts: [...new Set(candidates.map((c) => c.started_at))],
        ids: [...new Set(candidates.map((c) => c.trace_id))],
      },
      `executions.list.by_${sort}.rows`,
    );
    const live = liveRows(rows, (r) => `${r.started_at}\u0000${r.trace_id}`);
    const out: SortedRow[] = [];
    for (const c of candidates) {
      const row = live.get(`${c.started_at}\u0000${c.trace_id}`);
      if (!row || String(row.version) !== c.version) continue;
      const { version: _v, sign: _s, ...r } = row;
      out.push(r);
    }
    return out;
  }
}
