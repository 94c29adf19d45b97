// The composition of finance (docs/spend.md, "Invoices and reconciliation", "Chargeback
// statements"; part of the one root, src/compose/): invoices in PostgreSQL, the reconciliation and
// the statements over the spend rollups (the breakdowns of GET …/spend) and the executions ledger,
// their reports as CSV and Parquet, and the scheduled monthly statements beside the daily export.
import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Stores } from '../stores/index.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { Breakdowns } from '../spend/breakdowns.ts';
import { listProjects } from '../auth/project-repository.ts';
import { listApiKeys } from '../auth/api-key-repository.ts';
import { createExecutionFinance } from '../executions/execution-finance-repository.ts';
import { createReportParquet, type ReportParquet } from '../exports/report-parquet.ts';
import { createInvoiceRepository } from '../finance/invoice-repository.ts';
import { createInvoices, type Invoices } from '../finance/invoices.ts';
import { createReconciliation, type OurCell, type Reconciliation } from '../finance/reconciliation.ts';
import { createStatements, STATEMENT_MAX_LINES, type BreakdownReader, type Statements } from '../finance/statements.ts';
import { createStatementExport, type StatementExport } from '../finance/statement-export.ts';
import { createStatementExportStore } from '../finance/statement-export-repository.ts';

export interface Finance {
  invoices: Invoices;
  reconciliation: Reconciliation;
  statements: Statements;
  /** Reports as Parquet, written by the engine. */
  parquet: ReportParquet;
  statementExport: StatementExport;
  processors(): JobProcessor[];
  schedule(runner: JobRunner): Promise<void>;
}

export function createFinance(config: Config, stores: Stores, logger: Logger, deps: { breakdowns: Breakdowns; now: () => Date }): Finance {
  const invoiceRepository = createInvoiceRepository(stores.postgres);
  const ledger = createExecutionFinance(stores.clickhouse);
  const breakdown: BreakdownReader = (projectId, q) => deps.breakdowns.breakdown(projectId, q);
  const scratchDir = path.join(config.dataDir, 'export-scratch');
  const parquet = createReportParquet(stores.clickhouse, scratchDir);
  const reconciliation = createReconciliation({
    invoiceCells: (projectId, first, last, provider) => invoiceRepository.cells(projectId, first, last, provider),
    // The same rollups and arithmetic as GET …/spend?group_by=day,provider,model over the month.
    async ourCells(projectId, month, provider) {
      const b = await breakdown(projectId, {
        group_by: ['day', 'provider', 'model'],
        start: month.start,
        end: month.end,
        limit: STATEMENT_MAX_LINES,
        ...(provider ? { provider: [provider] } : {}),
      });
      return b.rows.map((r): OurCell => ({
        day: String(r.day),
        provider: String(r.provider),
        model: String(r.model),
        cost_usd: r.cost_usd,
        executions: r.executions,
        tokens_in: r.tokens_in,
        tokens_out: r.tokens_out,
        unpriced_executions: r.unpriced_executions,
      }));
    },
    explanations: (r) => ledger.explanations(r),
  });
  const statements = createStatements({
    breakdown,
    tagShares: (r) => ledger.tagShares(r),
    apiKeyNames: async (projectId) => new Map((await listApiKeys(stores.postgres, projectId)).map((k) => [k.key_id, k.name])),
  });
  const statementExport = createStatementExport({
    config: config.exports,
    scratchDir,
    store: createStatementExportStore(stores.postgres),
    projects: async () => (await listProjects(stores.postgres, 'all')).map((r) => r.project_id),
    statements,
    parquet,
    now: deps.now,
    logger: logger.child({ area: 'statements' }),
  });
  return {
    invoices: createInvoices(invoiceRepository),
    reconciliation,
    statements,
    parquet,
    statementExport,
    processors: () => [statementExport.processor],
    schedule: (runner) => statementExport.schedule(runner),
  };
}
