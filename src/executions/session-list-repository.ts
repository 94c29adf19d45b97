// Pages of sessions (GET …/sessions, docs/executions.md "Sessions and users"): most recently seen
// first (the listing's activity read, execution-listing-repository.ts), or by cost, executions or
// errors (one grouped read of the window); and how many sessions the window holds. Exact: every
// figure is a sum of sign, so a corrected execution counts once.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import { fromClickHouseTime } from '../time.ts';
import { activityFilter, type ActivityQuery, type ScoreFilter } from './execution-filter.ts';

export interface ActivityRow {
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

/** A session's or a user's row as the API shows it. */
export function presentActivity(by: 'session' | 'user', r: ActivityRow) {
  return {
    [by === 'session' ? 'session_id' : 'user_id']: r.id,
    ...(by === 'session' ? { user_id: r.last_user || null } : { sessions: Number(r.sessions) }),
    executions: Number(r.executions),
    errors: Number(r.errors),
    cost_usd: fromScaled(toScaled(r.cost_usd, NANOS), NANOS),
    tokens_in: Number(r.tokens_in),
    tokens_out: Number(r.tokens_out),
    first_seen: fromClickHouseTime(r.first_seen),
    last_seen: fromClickHouseTime(r.last_seen),
  };
}

/** The order of a sessions page other than most recently seen (descending; ties: last seen, then id). */
const ORDERS = { cost_usd: 'cost', executions: 'executions', errors: 'errors' } as const;

export function createSessionList(
  ch: ClickHouseStore,
  deps: {
    scoreFilter: ScoreFilter;
    /** The most recently seen sessions (execution-listing-repository.ts activity). */
    recent(projectId: string, q: ActivityQuery): Promise<{ items: Array<Record<string, unknown>> }>;
  },
) {
  return {
    /**
     * A page of the window's sessions and their count. Ordered by a figure, the window's rows
     * (session_id, user_id, started_at, sign, status and cost only) are grouped by session in the
     * engine and the page taken from the groups: one read of the window, bounded by it.
     */
    async list(projectId: string, q: ActivityQuery) {
      const w = activityFilter(projectId, 'session', q, deps.scoreFilter);
      const offset = q.offset ?? 0;
      const sort = q.sort ?? 'last_seen';
      const ordered = async () =>
        (
          await ch.query<ActivityRow>(
            `SELECT id, last_user, executions, errors, toString(cost) AS cost_usd, tokens_in, tokens_out, first_seen, last_seen FROM (
               SELECT session_id AS id, argMax(user_id, started_at) AS last_user, sum(sign) AS executions,
                 sum(if(status = 'error', sign, 0)) AS errors, sum(toDecimal128(cost_usd, 9) * sign) AS cost,
                 sum(toInt64(tokens_in) * sign) AS tokens_in, sum(toInt64(tokens_out) * sign) AS tokens_out,
                 minIf(started_at, sign = 1) AS first_seen, maxIf(started_at, sign = 1) AS last_seen
               FROM executions WHERE ${w.sql} AND session_id != '' GROUP BY id HAVING executions > 0
               ORDER BY ${sort === 'last_seen' ? 'last_seen' : ORDERS[sort]} DESC, last_seen DESC, id LIMIT {limit:UInt32} OFFSET {offset:UInt32})
             ORDER BY ${sort === 'last_seen' ? 'last_seen' : ORDERS[sort]} DESC, last_seen DESC, id`,
            { ...w.params, limit: q.limit, offset },
            `executions.sessions.by_${sort}`,
          )
        ).map((r) => presentActivity('session', r));
      // The count groups every session of the window (0.6 s for 33M executions in 30 days): only
      // when asked, so a page of the most recently seen stays a read of a few granules.
      const count = async () => {
        const [counted] = await ch.query<{ n: string }>(
          `SELECT count() AS n FROM (SELECT session_id FROM executions WHERE ${w.sql} AND session_id != '' GROUP BY session_id HAVING sum(sign) > 0)`,
          w.params,
          'executions.sessions.count',
        );
        return Number(counted?.n ?? 0);
      };
      const [items, total] = await Promise.all([
        sort === 'last_seen' ? deps.recent(projectId, q).then((p) => p.items) : ordered(),
        q.with_total ? count() : Promise.resolve(null),
      ]);
      return { items, total, limit: q.limit, offset };
    },
  };
}

export type SessionList = ReturnType<typeof createSessionList>;
