// Project stats (GET .../stats): everything from the materialized daily spend tables, never a scan
// of raw executions (docs/architecture.md, invariant 6). SummingMergeTree rows are summed at read (no FINAL needed), and
// money stays exact: Decimal sums leave ClickHouse as text and are added as nano-dollar BigInts.
import { average, nanos, usd } from './money.ts';
import { dayWindow } from './window.ts';
import type { DailySpendRepository } from './daily-spend-repository.ts';

export interface WindowQuery {
  start?: string;
  end?: string;
}

/** The rollups and, from the prompts table, how many active prompts the project has. */
export function createStats(spend: DailySpendRepository, countPrompts: (projectId: string) => Promise<number>, now: () => Date) {
  return {
    async project(projectId: string, q: WindowQuery) {
      const w = dayWindow(q, now());
      const range = { first: w.days[0]!, last: w.days[w.days.length - 1]! };
      // One read of the days of spend_by_dims (day × provider × model: small) serves the totals, the days and the
      // models; the embedded engine runs one query at a time, so fewer queries is faster.
      const [cells, prompts, promptCount] = await Promise.all([
        spend.cells(projectId, range),
        spend.topPrompts(projectId, range, 10),
        countPrompts(projectId),
      ]);
      const byDay = new Map<string, { cost: bigint; n: bigint }>();
      const byModel = new Map<string, { provider: string; model: string; cost: bigint; n: bigint; unpriced: bigint }>();
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
        const m = byModel.get(key) ?? { provider: c.provider, model: c.model, cost: 0n, n: 0n, unpriced: 0n };
        byModel.set(key, { ...m, cost: m.cost + cost, n: m.n + n, unpriced: m.unpriced + BigInt(c.unpriced_t) });
      }
      const daily = w.days.map((date) => {
        const d = byDay.get(date);
        return { date, cost: usd(d?.cost ?? 0n), executions: Number(d?.n ?? 0n) };
      });
      const models = [...byModel.values()]
        .filter((m) => m.n !== 0n || m.cost !== 0n)
        .sort((a, b) =>
          a.cost !== b.cost
            ? b.cost > a.cost
              ? 1
              : -1
            : a.n !== b.n
              ? b.n > a.n
                ? 1
                : -1
              : a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model),
        );
      return {
        start: w.start.toISOString(),
        end: w.end.toISOString(),
        prompts_count: promptCount,
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
        by_model: models.map((m) => ({
          provider: m.provider,
          model: m.model,
          cost: usd(m.cost),
          execution_count: Number(m.n),
          unpriced_executions: Number(m.unpriced),
        })),
      };
    },
  };
}

export type Stats = ReturnType<typeof createStats>;
