// The total of an executions list (GET …/executions, docs/executions.md "Total") from the spend
// rollups when they hold it: a count over the signed executions rows reads every row of the window
// that passes the filter (50,000,000 rows for 45 days of a project of 100,000,000), where a rollup
// reads one row per group and bucket. The rollups count every execution ever stored (they outlive
// raw-data retention), the list only those still stored: so only the whole hours at or after the
// project's intact horizon come from a rollup; the rest of the window (its partial hours, and
// what lies before the horizon) is counted over the executions rows by the listing.
import { anyOf, type ListQuery } from '../executions/execution-filter.ts';
import type { RollupTotal } from '../executions/execution-listing-repository.ts';
import type { BreakdownFilter, BreakdownRead, BreakdownRow } from '../reads/breakdown-sql.ts';
import { parseTime } from '../time.ts';
import { planOf } from './breakdowns.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The latest instant a window without an end reaches in the rollups (later rows are counted from the executions). */
const OPEN_END_DAYS = 3650;

/** The list's filters a rollup may hold; any other filter given, the total is counted over the executions rows. */
const HELD = new Set(['provider', 'model', 'agent_id', 'user_id', 'session_id', 'api_key_id', 'tag', 'prompt_id', 'start', 'end']);
/** What shapes the page, not which executions count. */
const PAGING = new Set(['limit', 'offset', 'cursor', 'sort', 'order', 'scores']);

export function createListTotals(deps: {
  rollups: { breakdown(r: BreakdownRead): Promise<BreakdownRow[]> };
  /**
   * The instant (epoch ms) from which every execution of the project the rollups count is still
   * stored, or undefined when none was ever removed (src/spend/retention.ts, intactSince).
   */
  intactSince: (projectId: string) => Promise<number | undefined>;
  now: () => Date;
}) {
  const rollupTotal: RollupTotal = async (projectId: string, q: ListQuery) => {
    const filter: BreakdownFilter = { anyOf: {}, metadata: {} };
    for (const [key, value] of Object.entries(q)) {
      if (value === undefined || PAGING.has(key)) continue;
      if (key.startsWith('metadata.')) filter.metadata[key.slice('metadata.'.length)] = String(value);
      else if (!HELD.has(key)) return undefined;
    }
    for (const column of ['provider', 'model', 'agent_id', 'user_id', 'session_id', 'api_key_id'] as const) {
      const values = anyOf(q[column]);
      if (values) filter.anyOf[column] = values;
    }
    const tags = (q.tag ?? []).map((t) => t.trim()).filter(Boolean);
    if (tags.length) filter.anyOf.tag = tags;
    if (q.prompt_id) filter.anyOf.prompt_id = [q.prompt_id];
    const s = q.start !== undefined ? parseTime(q.start, 'start').getTime() : undefined;
    const e = q.end !== undefined ? parseTime(q.end, 'end').getTime() : undefined;
    // Only a rollup by grain: an hourly one (a session, a user with an agent) reads more than the executions' indexes do.
    if (!planOf([], filter, { start: new Date(0), end: new Date(HOUR_MS) })) return undefined;
    const intact = await deps.intactSince(projectId);
    const lo = Math.ceil(Math.max(s ?? 0, intact ?? 0, 0) / HOUR_MS) * HOUR_MS;
    const hi = Math.floor((e ?? deps.now().getTime() + OPEN_END_DAYS * DAY_MS) / HOUR_MS) * HOUR_MS;
    if (lo >= hi) return undefined;
    const window = { start: new Date(lo), end: new Date(hi) };
    const chTime = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
    const [row] = await deps.rollups.breakdown({
      projectId,
      source: 'spend_hourly', // the hours of a family without its own (users); the rest is read by grain
      start: chTime(window.start),
      end: chTime(window.end),
      groups: [],
      filter,
      limit: 1,
      grains: planOf([], filter, window),
    });
    const iso = (t: number) => new Date(t).toISOString();
    return {
      executions: Number(row?.all_executions_t ?? 0),
      rest: [
        // (nothing is stored before the epoch: a window open at its start and read from it leaves nothing before)
        ...((s === undefined ? lo > 0 : s < lo) ? [{ ...(s !== undefined ? { start: iso(s) } : {}), end: iso(lo) }] : []),
        ...(e === undefined || hi < e ? [{ start: iso(hi), ...(e !== undefined ? { end: iso(e) } : {}) }] : []),
      ],
    };
  };
  return rollupTotal;
}

export type ListTotals = ReturnType<typeof createListTotals>;
