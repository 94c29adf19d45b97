// Project stats (GET .../stats): everything from the materialized daily spend tables, never a scan
// of raw executions (invariant 6). SummingMergeTree rows are summed at read (no FINAL needed), and
// money stays exact: Decimal sums leave ClickHouse as text and are added as nano-dollar BigInts.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import type { Queryable } from '../stores/postgres.ts';
import { average, nanos, usd } from './money.ts';
import { dayWindow, type DayWindow } from './window.ts';

export interface WindowQuery {
  start?: string;
  end?: string;
}

interface CellRow { date_t: string; provider: string; model: string; cost_t: string; executions_t: string; unpriced_t: string; tokens_in_t: string; tokens_out_t: string }
interface PromptRow { prompt_id: string; cost_t: string; executions_t: string }

export function createStats(ch: ClickHouseStore, pg: Queryable, now: () => Date) {
  const range = (projectId: string, w: DayWindow) => ({ p: projectId, s: w.days[0], e: w.days[w.days.length - 1] });
  return {
    async project(projectId: string, q: WindowQuery) {
      const w = dayWindow(q, now());
      const params = range(projectId, w);
      const inWindow = 'project_id = {p:String} AND day >= toDate({s:String}) AND day <= toDate({e:String})';
      // One read of daily_spend (day × provider × model: small) serves the totals, the days and the
      // models; the embedded engine runs one query at a time, so fewer queries is faster.
      const [cells, prompts, promptCount] = await Promise.all([
        ch.query<CellRow>(
          `SELECT toString(day) AS date_t, provider, model, toString(sum(cost_usd)) AS cost_t, toString(sum(executions)) AS executions_t,
             toString(sum(unpriced_executions)) AS unpriced_t, toString(sum(tokens_in)) AS tokens_in_t, toString(sum(tokens_out)) AS tokens_out_t
           FROM daily_spend WHERE ${inWindow} GROUP BY day, provider, model`,
          params,
          'spend.stats.daily',
        ),
        ch.query<PromptRow>(
          `SELECT prompt_id, toString(sum(cost_usd)) AS cost_t, toString(sum(executions)) AS executions_t
           FROM daily_prompt_spend WHERE ${inWindow} GROUP BY prompt_id
           HAVING sum(executions) != 0 OR sum(cost_usd) != 0
           ORDER BY sum(cost_usd) DESC, sum(executions) DESC, prompt_id LIMIT 10`,
          params,
          'spend.stats.top_prompts',
        ),
        pg.query<{ n: string }>('SELECT count(*) AS n FROM prompts WHERE project_id = $1 AND archived_at IS NULL', [projectId]),
      ]);
      const byDay = new Map<string, { cost: bigint; n: bigint }>();
      const byModel = new Map<string, { provider: string; model: string; cost: bigint; n: bigint }>();
      let total = 0n;
      let executions = 0n;
      let unpriced = 0n;
      let tokensIn = 0n;
      let tokensOut = 0n;
      for (const c of cells) {
        const cost = nanos(c.cost_t);
        const n = BigInt(c.executions_t);
        total += cost;
        executions += n;
        unpriced += BigInt(c.unpriced_t);
        tokensIn += BigInt(c.tokens_in_t);
        tokensOut += BigInt(c.tokens_out_t);
        const d = byDay.get(c.date_t) ?? { cost: 0n, n: 0n };
        byDay.set(c.date_t, { cost: d.cost + cost, n: d.n + n });
        const key = `${c.provider}\u0000${c.model}`;
        const m = byModel.get(key) ?? { provider: c.provider, model: c.model, cost: 0n, n: 0n };
        byModel.set(key, { ...m, cost: m.cost + cost, n: m.n + n });
      }
      const daily = w.days.map((date) => {
        const d = byDay.get(date);
        return { date, cost: usd(d?.cost ?? 0n), executions: Number(d?.n ?? 0n) };
      });
      const models = [...byModel.values()]
        .filter((m) => m.n !== 0n || m.cost !== 0n)
        .sort((a, b) => (a.cost !== b.cost ? (b.cost > a.cost ? 1 : -1) : a.n !== b.n ? (b.n > a.n ? 1 : -1) : a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model)));
      return {
        start: w.start.toISOString(),
        end: w.end.toISOString(),
        prompts_count: Number(promptCount[0]?.n ?? 0),
        total_cost: usd(total),
        total_executions: Number(executions),
        avg_cost_per_execution: usd(average(total, executions)),
        unpriced_executions: Number(unpriced),
        total_tokens_in: Number(tokensIn),
        total_tokens_out: Number(tokensOut),
        daily_costs: daily,
        top_prompts: prompts.map((r) => ({
          prompt_id: r.prompt_id,
          cost: usd(nanos(r.cost_t)),
          execution_count: Number(r.executions_t),
          avg_cost: usd(average(nanos(r.cost_t), BigInt(r.executions_t))),
        })),
        by_model: models.map((m) => ({ provider: m.provider, model: m.model, cost: usd(m.cost), execution_count: Number(m.n) })),
      };
    },
  };
}

export type Stats = ReturnType<typeof createStats>;
