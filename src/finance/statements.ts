// Chargeback statements (docs/spend.md, "Chargeback statements"): a month's spend per user, agent,
// API key or tag — one line per value, '' for executions without one — whose lines add up to the
// project's spend of the month exactly. Users, agents and API keys partition the executions (each
// has one), so their lines are the spend rollups' month rows (GET …/spend grouped by the
// dimension). Tags do not (an execution may carry several): each execution's cost and tokens are
// split evenly among its distinct tags, the remainder nano-dollars (tokens) going one each to the
// first tags in sorted order, read from the executions of the month.
import { unprocessable } from '../errors.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import type { FinanceRange, TagShareRow } from '../executions/execution-finance-repository.ts';
import type { BreakdownQuery } from '../spend/breakdowns.ts';
import type { ReportColumn } from '../exports/report-parquet.ts';
import type { Month } from './month.ts';

export const STATEMENT_DIMENSIONS = ['user', 'tag', 'agent', 'api_key'] as const;
export type StatementDimension = (typeof STATEMENT_DIMENSIONS)[number];

/** Groups one statement lists at most; the rest (never seen in practice) is one line `(other)`, so the total still holds. */
export const STATEMENT_MAX_LINES = 1_000_000;

interface Measures {
  cost_usd: string;
  executions: number;
  tokens_in: number;
  tokens_out: number;
  unpriced_executions: number;
}

/** The part of GET …/spend a statement reads (src/spend/breakdowns.ts). */
export type BreakdownReader = (
  projectId: string,
  q: BreakdownQuery,
) => Promise<{ total: Measures; rows: Array<Measures & Record<string, unknown>>; other: (Measures & { groups: number }) | null }>;

export interface StatementDeps {
  breakdown: BreakdownReader;
  tagShares(r: FinanceRange): Promise<TagShareRow[]>;
  /** The names of a project's API keys by key id (revoked ones too: their spend stays theirs). */
  apiKeyNames(projectId: string): Promise<Map<string, string>>;
}

export interface StatementLine extends Measures {
  value: string;
  /** api_key: the key's name (what a finance team recognises), '' for none or a key since deleted */
  name?: string;
  /** tags: the executions of this line that carry other tags too (their cost is split) */
  shared_executions?: number;
}

const dec = (n: bigint) => fromScaled(n, NANOS);

export function createStatements(deps: StatementDeps) {
  async function linesOf(projectId: string, month: Month, by: StatementDimension): Promise<StatementLine[]> {
    if (by === 'tag') {
      const rows = await deps.tagShares({ projectId, start: month.chStart, end: month.chEnd });
      return rows.map((r) => ({
        value: r.tag,
        cost_usd: dec(BigInt(r.cost_nanos)),
        executions: Number(r.executions),
        tokens_in: Number(r.tokens_in),
        tokens_out: Number(r.tokens_out),
        unpriced_executions: Number(r.unpriced),
        shared_executions: Number(r.shared_executions),
      }));
    }
    const b = await deps.breakdown(projectId, { group_by: [by], start: month.start, end: month.end, limit: STATEMENT_MAX_LINES });
    const lines: StatementLine[] = b.rows.map((r) => ({
      value: String(r[by] ?? ''),
      cost_usd: r.cost_usd,
      executions: r.executions,
      tokens_in: r.tokens_in,
      tokens_out: r.tokens_out,
      unpriced_executions: r.unpriced_executions,
    }));
    if (b.other) lines.push({ ...b.other, value: '(other)' });
    if (by === 'api_key') {
      const names = await deps.apiKeyNames(projectId);
      for (const l of lines) l.name = names.get(l.value) ?? '';
    }
    return lines;
  }

  return {
    async statement(projectId: string, month: Month, by: StatementDimension) {
      const [lines, project] = await Promise.all([
        linesOf(projectId, month, by),
        deps.breakdown(projectId, { start: month.start, end: month.end }),
      ]);
      const linesTotal = lines.reduce((s, l) => s + toScaled(l.cost_usd, NANOS), 0n);
      const total = toScaled(project.total.cost_usd, NANOS);
      if (linesTotal !== total)
        // Only tags read raw executions: a month that raw-data retention thinned no longer holds them all.
        throw unprocessable(
          `by=${by}: the month's executions add up to $${dec(linesTotal)} where its spend is $${dec(total)}; ` +
            "raw-data retention removed some of the month's executions (a tag statement splits each one), so this statement cannot balance",
        );
      return {
        month: month.month,
        dimension: by,
        start: month.start,
        end: month.end,
        allocation: by === 'tag' ? 'even_split' : 'whole',
        total: {
          cost_usd: project.total.cost_usd,
          executions: project.total.executions,
          tokens_in: project.total.tokens_in,
          tokens_out: project.total.tokens_out,
          unpriced_executions: project.total.unpriced_executions,
        },
        lines_total_usd: dec(linesTotal),
        lines,
      };
    },
  };
}

export type Statements = ReturnType<typeof createStatements>;
export type Statement = Awaited<ReturnType<Statements['statement']>>;

export const STATEMENT_COLUMNS: readonly ReportColumn[] = [
  { name: 'row_type', type: 'String' },
  { name: 'month', type: 'String' },
  { name: 'dimension', type: 'String' },
  { name: 'value', type: 'String' },
  { name: 'name', type: 'String' },
  { name: 'cost_usd', type: 'Decimal(38, 9)' },
  { name: 'executions', type: 'Int64' },
  { name: 'tokens_in', type: 'Int64' },
  { name: 'tokens_out', type: 'Int64' },
  { name: 'unpriced_executions', type: 'Int64' },
  { name: 'shared_executions', type: 'Int64' },
];

/** A statement's lines in STATEMENT_COLUMNS, then its `total` line (the project's spend of the month). */
export function statementLines(s: Statement): Array<Record<string, unknown>> {
  const line = (rowType: string, value: string, m: Measures & { shared_executions?: number; name?: string }) => ({
    row_type: rowType,
    month: s.month,
    dimension: s.dimension,
    value,
    name: m.name ?? '',
    cost_usd: m.cost_usd,
    executions: m.executions,
    tokens_in: m.tokens_in,
    tokens_out: m.tokens_out,
    unpriced_executions: m.unpriced_executions,
    shared_executions: m.shared_executions ?? 0,
  });
  return [...s.lines.map((l) => line('line', l.value, l)), line('total', '', s.total)];
}
