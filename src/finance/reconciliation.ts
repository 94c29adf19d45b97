// Invoice reconciliation (docs/spend.md, "Invoices and reconciliation"): per UTC day and model of a
// month, the invoices' cost beside ours (the spend rollups, as GET …/spend by day and model), the
// difference, and the executions that explain it — unpriced, without usage, failed —, the invoice
// lines no execution was traced for, and our cost no invoice line bills. Money: BigInt nano-dollars,
// decimal strings out; an invoice cell's exact sum (PostgreSQL numeric) is rounded half-up once.
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import type { ExplanationRow, FinanceRange } from '../executions/execution-finance-repository.ts';
import type { InvoiceCell } from './invoice-repository.ts';
import { modelKey } from './model-key.ts';
import type { Month } from './month.ts';
import type { ReportColumn } from '../exports/report-parquet.ts';

/** Our spend of one UTC day, provider and model (a row of GET …/spend grouped by day, provider, model). */
export interface OurCell {
  /** ISO 8601 start of the day */
  day: string;
  provider: string;
  model: string;
  cost_usd: string;
  executions: number;
  tokens_in: number;
  tokens_out: number;
  unpriced_executions: number;
}

export interface ReconciliationDeps {
  invoiceCells(projectId: string, first: string, last: string, provider?: string): Promise<InvoiceCell[]>;
  ourCells(projectId: string, month: Month, provider?: string): Promise<OurCell[]>;
  explanations(r: FinanceRange): Promise<ExplanationRow[]>;
}

export type RowStatus = 'matched' | 'explained' | 'not_traced' | 'not_invoiced' | 'unexplained';

/** Invoice sums are kept at this scale until the one rounding to nano-dollars. */
const EXACT = 24;
const EXAMPLES = 5;

function roundToNanos(x: bigint): bigint {
  const f = 10n ** BigInt(EXACT - NANOS);
  return x >= 0n ? (x + f / 2n) / f : -((-x + f / 2n) / f);
}

const dec = (n: bigint) => fromScaled(n, NANOS);
/** Money in a sentence: $1.5, -$0.2. */
const usd = (n: bigint) => (n < 0n ? `-$${dec(-n)}` : `$${dec(n)}`);
const merge = (a: string[], b: string[]) => [...new Set([...a, ...b])].sort().slice(0, EXAMPLES);

interface Cell {
  day: string;
  model: string;
  invoiceExact?: bigint;
  invoiceModels: Set<string>;
  invoiceIds: Set<string>;
  refs: string[];
  ours: bigint;
  ourModels: Set<string>;
  providers: Set<string>;
  executions: number;
  tokensIn: number;
  tokensOut: number;
  unpricedExecutions: number;
  unpriced: { n: number; tin: number; tout: number; traces: string[] };
  noUsage: { n: number; cost: bigint; traces: string[] };
  failed: { n: number; cost: bigint; tin: number; tout: number; traces: string[] };
}

const newCell = (day: string, model: string): Cell => ({
  day,
  model,
  invoiceModels: new Set(),
  invoiceIds: new Set(),
  refs: [],
  ours: 0n,
  ourModels: new Set(),
  providers: new Set(),
  executions: 0,
  tokensIn: 0,
  tokensOut: 0,
  unpricedExecutions: 0,
  unpriced: { n: 0, tin: 0, tout: 0, traces: [] },
  noUsage: { n: 0, cost: 0n, traces: [] },
  failed: { n: 0, cost: 0n, tin: 0, tout: 0, traces: [] },
});

/**
 * The causes that can account for a difference in its direction: the invoice above ours — calls
 * we priced at nothing (unpriced), whose usage we never got (no tokens), failed ones the provider
 * billed; ours above the invoice — failed calls (or usage-less ones) we priced and it did not bill.
 */
function causesOf(c: Cell, difference: bigint) {
  return {
    unpriced: difference > 0n && c.unpriced.n > 0,
    noUsage: c.noUsage.n > 0 && (difference > 0n || c.noUsage.cost > 0n),
    failed: c.failed.n > 0,
  };
}

function statusOf(c: Cell, difference: bigint): RowStatus {
  if (c.invoiceExact === undefined) return 'not_invoiced';
  if (c.executions === 0 && c.ours === 0n) return 'not_traced';
  if (difference === 0n) return 'matched';
  return Object.values(causesOf(c, difference)).some(Boolean) ? 'explained' : 'unexplained';
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** A sentence saying what the row's figures suggest, for the person reading the report. */
function hintOf(c: Cell, status: RowStatus, invoice: bigint, difference: bigint): string {
  switch (status) {
    case 'matched':
      return 'matches to the nano-dollar';
    case 'not_traced':
      return `${usd(invoice)} billed with no execution traced that day for this model: calls not traced (another service, a key used outside Traceloom, lost traces)`;
    case 'not_invoiced':
      return `${usd(c.ours)} of our spend on no invoice line (billed by another provider or invoice, or not imported yet)`;
    case 'unexplained':
      return `a difference of ${usd(difference)} no unpriced, usage-less or failed execution accounts for: a price that differs from the provider's, or calls not traced`;
  }
  const causes = causesOf(c, difference);
  const parts: string[] = [];
  if (causes.unpriced)
    parts.push(
      `${plural(c.unpriced.n, 'unpriced execution')} (${c.unpriced.tin + c.unpriced.tout} tokens) priced at $0 here: add the model's price, then reprice`,
    );
  if (causes.noUsage) parts.push(`${plural(c.noUsage.n, 'execution')} without usage, at ${usd(c.noUsage.cost)} here`);
  if (causes.failed) parts.push(`${plural(c.failed.n, 'failed execution')} at ${usd(c.failed.cost)} here`);
  return `a difference of ${usd(difference)}: ${parts.join('; ')}`;
}

function present(c: Cell) {
  const invoice = c.invoiceExact === undefined ? 0n : roundToNanos(c.invoiceExact);
  const difference = invoice - c.ours;
  const status = statusOf(c, difference);
  return {
    day: c.day,
    model: c.model,
    invoice_models: [...c.invoiceModels].sort(),
    our_models: [...c.ourModels].sort(),
    providers: [...c.providers].sort(),
    invoice_usd: dec(invoice),
    ours_usd: dec(c.ours),
    difference_usd: dec(difference),
    status,
    hint: hintOf(c, status, invoice, difference),
    executions: c.executions,
    tokens_in: c.tokensIn,
    tokens_out: c.tokensOut,
    explanation: {
      unpriced: { executions: c.unpriced.n, tokens_in: c.unpriced.tin, tokens_out: c.unpriced.tout, trace_ids: c.unpriced.traces },
      missing_usage: { executions: c.noUsage.n, cost_usd: dec(c.noUsage.cost), trace_ids: c.noUsage.traces },
      failed: {
        executions: c.failed.n,
        cost_usd: dec(c.failed.cost),
        tokens_in: c.failed.tin,
        tokens_out: c.failed.tout,
        trace_ids: c.failed.traces,
      },
      not_traced: status === 'not_traced',
      not_invoiced: status === 'not_invoiced',
    },
    invoice_ids: [...c.invoiceIds].sort(),
    invoice_refs: c.refs.slice(0, EXAMPLES),
  };
}

export type ReconciliationRow = ReturnType<typeof present>;

export function createReconciliation(deps: ReconciliationDeps) {
  return {
    async reconcile(projectId: string, month: Month, provider?: string) {
      const p = provider?.toLowerCase();
      const [invoiceCells, ourCells, explanations] = await Promise.all([
        deps.invoiceCells(projectId, month.first, month.last, p),
        deps.ourCells(projectId, month, p),
        deps.explanations({ projectId, start: month.chStart, end: month.chEnd, provider: p }),
      ]);
      // A day an invoice bills without models (an export not grouped by model) is reconciled whole.
      const wholeDays = new Set(invoiceCells.filter((c) => c.model_key === '').map((c) => c.day));
      const cells = new Map<string, Cell>();
      const cellOf = (day: string, model: string) => {
        const key = wholeDays.has(day) ? '' : modelKey(model);
        const id = `${day}\n${key}`;
        let c = cells.get(id);
        if (!c) cells.set(id, (c = newCell(day, key)));
        return c;
      };
      for (const i of invoiceCells) {
        const c = cellOf(i.day, i.model_key);
        c.invoiceExact = (c.invoiceExact ?? 0n) + toScaled(i.cost_usd, EXACT);
        i.models.forEach((m) => c.invoiceModels.add(m));
        i.invoice_ids.forEach((id) => c.invoiceIds.add(id));
        c.refs.push(...i.refs);
      }
      for (const o of ourCells) {
        const c = cellOf(o.day.slice(0, 10), o.model);
        c.ours += toScaled(o.cost_usd, NANOS);
        c.ourModels.add(o.model);
        c.providers.add(o.provider);
        c.executions += o.executions;
        c.tokensIn += o.tokens_in;
        c.tokensOut += o.tokens_out;
        c.unpricedExecutions += o.unpriced_executions;
      }
      for (const e of explanations) {
        const c = cellOf(e.day, e.model);
        c.unpriced.n += Number(e.unpriced_n);
        c.unpriced.tin += Number(e.unpriced_tokens_in);
        c.unpriced.tout += Number(e.unpriced_tokens_out);
        c.unpriced.traces = merge(c.unpriced.traces, e.unpriced_traces);
        c.noUsage.n += Number(e.no_usage_n);
        c.noUsage.cost += toScaled(e.no_usage_cost, NANOS);
        c.noUsage.traces = merge(c.noUsage.traces, e.no_usage_traces);
        c.failed.n += Number(e.failed_n);
        c.failed.cost += toScaled(e.failed_cost, NANOS);
        c.failed.tin += Number(e.failed_tokens_in);
        c.failed.tout += Number(e.failed_tokens_out);
        c.failed.traces = merge(c.failed.traces, e.failed_traces);
      }
      const rows = [...cells.values()]
        // A cell only an explanation names (our rows net to nothing there) is no line of either side.
        .filter((c) => c.invoiceExact !== undefined || c.executions !== 0 || c.ours !== 0n)
        .sort((a, b) => (a.day === b.day ? (a.model < b.model ? -1 : 1) : a.day < b.day ? -1 : 1))
        .map(present);
      let invoiceTotal = 0n;
      let oursTotal = 0n;
      const counts: Record<RowStatus, number> = { matched: 0, explained: 0, not_traced: 0, not_invoiced: 0, unexplained: 0 };
      for (const r of rows) {
        invoiceTotal += toScaled(r.invoice_usd, NANOS);
        oursTotal += toScaled(r.ours_usd, NANOS);
        counts[r.status]++;
      }
      return {
        month: month.month,
        provider: p ?? null,
        start: month.start,
        end: month.end,
        totals: {
          invoice_usd: dec(invoiceTotal),
          ours_usd: dec(oursTotal),
          difference_usd: dec(invoiceTotal - oursTotal),
          rows: rows.length,
          ...counts,
        },
        rows,
      };
    },
  };
}

export type Reconciliation = ReturnType<typeof createReconciliation>;
export type ReconciliationReport = Awaited<ReturnType<Reconciliation['reconcile']>>;

/** The monthly report's columns (CSV and Parquet): one line per row, then one `total` line. */
export const RECONCILIATION_COLUMNS: readonly ReportColumn[] = [
  { name: 'row_type', type: 'String' },
  { name: 'month', type: 'String' },
  { name: 'day', type: 'Nullable(Date)' },
  { name: 'model', type: 'String' },
  { name: 'invoice_models', type: 'Array(String)' },
  { name: 'our_models', type: 'Array(String)' },
  { name: 'invoice_usd', type: 'Decimal(38, 9)' },
  { name: 'ours_usd', type: 'Decimal(38, 9)' },
  { name: 'difference_usd', type: 'Decimal(38, 9)' },
  { name: 'status', type: 'String' },
  { name: 'hint', type: 'String' },
  { name: 'executions', type: 'Int64' },
  { name: 'unpriced_executions', type: 'Int64' },
  { name: 'missing_usage_executions', type: 'Int64' },
  { name: 'failed_executions', type: 'Int64' },
  { name: 'example_trace_ids', type: 'Array(String)' },
  { name: 'invoice_refs', type: 'Array(String)' },
];

/** The report's lines, in RECONCILIATION_COLUMNS. */
export function reconciliationLines(r: ReconciliationReport): Array<Record<string, unknown>> {
  return [
    ...r.rows.map((row) => ({
      row_type: 'line',
      month: r.month,
      day: row.day,
      model: row.model,
      invoice_models: row.invoice_models,
      our_models: row.our_models,
      invoice_usd: row.invoice_usd,
      ours_usd: row.ours_usd,
      difference_usd: row.difference_usd,
      status: row.status,
      hint: row.hint,
      executions: row.executions,
      unpriced_executions: row.explanation.unpriced.executions,
      missing_usage_executions: row.explanation.missing_usage.executions,
      failed_executions: row.explanation.failed.executions,
      example_trace_ids: merge(
        merge(row.explanation.unpriced.trace_ids, row.explanation.missing_usage.trace_ids),
        row.explanation.failed.trace_ids,
      ),
      invoice_refs: row.invoice_refs,
    })),
    {
      row_type: 'total',
      month: r.month,
      day: null,
      model: '',
      invoice_models: [],
      our_models: [],
      invoice_usd: r.totals.invoice_usd,
      ours_usd: r.totals.ours_usd,
      difference_usd: r.totals.difference_usd,
      status: r.totals.difference_usd === '0' ? 'matched' : 'differs',
      hint: '',
      executions: r.rows.reduce((s, x) => s + x.executions, 0),
      unpriced_executions: r.rows.reduce((s, x) => s + x.explanation.unpriced.executions, 0),
      missing_usage_executions: r.rows.reduce((s, x) => s + x.explanation.missing_usage.executions, 0),
      failed_executions: r.rows.reduce((s, x) => s + x.explanation.failed.executions, 0),
      example_trace_ids: [],
      invoice_refs: [],
    },
  ];
}
