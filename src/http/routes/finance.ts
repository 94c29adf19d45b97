// Finance routes (docs/spend.md, "Invoices and reconciliation", "Chargeback statements"): invoices
// imported from a provider's cost export, the month's reconciliation against our spend, and
// chargeback statements; reports as JSON, CSV or Parquet. Thin: src/finance does the work.
import type { Config } from '../../config.ts';
import type { Finance } from '../../compose/finance.ts';
import type { InvoiceFormat } from '../../finance/invoice-formats.ts';
import { monthOf } from '../../finance/month.ts';
import { RECONCILIATION_COLUMNS, reconciliationLines } from '../../finance/reconciliation.ts';
import { STATEMENT_COLUMNS, statementLines, type StatementDimension } from '../../finance/statements.ts';
import { tableCsv } from '../../exports/lines.ts';
import type { ReportColumn } from '../../exports/report-parquet.ts';
import { readRaw } from '../body.ts';
import { badRequest, unsupportedMediaType } from '../errors.ts';
import type { RouteContext, RouteDef } from './types.ts';

const P = '/api/projects/:project_id';
const tag = 'finance';
type ReportFormat = 'json' | 'csv' | 'parquet';

/** A report in the format asked: JSON as computed, or its lines as a CSV or Parquet download. */
async function answer(
  ctx: RouteContext,
  finance: Finance,
  format: ReportFormat,
  name: string,
  body: object,
  columns: readonly ReportColumn[],
  lines: () => Array<Record<string, unknown>>,
) {
  if (format === 'json') {
    ctx.body = body;
    return;
  }
  ctx.set('Content-Disposition', `attachment; filename="${name}.${format}"`);
  if (format === 'csv') {
    ctx.set('Content-Type', 'text/csv; charset=utf-8');
    ctx.body = tableCsv(
      columns.map((c) => c.name),
      lines(),
    );
    return;
  }
  const file = await finance.parquet.temporary(columns, lines());
  ctx.set('Content-Type', 'application/vnd.apache.parquet');
  ctx.length = file.bytes;
  ctx.body = file.stream;
}

export function financeRoutes(config: Config, finance: Finance): RouteDef[] {
  return [
    {
      method: 'POST',
      path: `${P}/invoices`,
      operationId: 'importInvoice',
      tag,
      access: 'authenticated',
      need: 'admin',
      query: 'InvoiceImportQuery',
      rawBody: {
        description:
          "A provider's cost export as published: OpenAI's Costs API page(s) (JSON) or dashboard cost CSV; Anthropic's Admin API " +
          'cost report (JSON, amounts in cents) or a CSV of its fields; or a generic CSV of date, model, cost (USD). At most ' +
          'MAX_INVOICE_BYTES (32 MiB). The format is told by the fields (or `format=`); docs/spend.md lists the columns read.',
        contentTypes: { 'application/json': undefined, 'text/csv': undefined },
      },
      summary: "Import a provider's usage/cost export as an invoice of the project (admin); the same file twice is one invoice",
      responses: {
        201: { description: 'The invoice, imported', schema: 'Invoice' },
        200: { description: 'The same content was imported before: that invoice', schema: 'Invoice' },
        400: { description: 'A line that cannot be read, named by its line (CSV) or JSON path and its column or field', schema: 'Error' },
        409: { description: 'A day of the file is already billed by the same provider in another invoice', schema: 'Error' },
        413: { description: 'Over MAX_INVOICE_BYTES', schema: 'Error' },
        415: { description: 'Neither JSON nor CSV, or a Content-Encoding', schema: 'Error' },
      },
      async handler(ctx) {
        const kind = ctx.is('application/json', '+json') ? 'json' : ctx.is('text/csv', 'text/plain') ? 'csv' : undefined;
        if (!kind) throw unsupportedMediaType(ctx.get('Content-Type') || undefined, 'application/json or text/csv');
        const encoding = ctx.get('Content-Encoding');
        if (encoding && encoding !== 'identity') throw unsupportedMediaType(`encoding ${encoding}`, 'an uncompressed body');
        const body = await readRaw(ctx, config.limits.maxInvoiceBytes);
        if (body.length === 0) throw badRequest('Request body is empty; send the cost export');
        const q = ctx.state.query as { format?: InvoiceFormat; provider?: string; provider_project?: string; name?: string };
        const r = await finance.invoices.import(ctx.state.projectId!, {
          kind,
          body,
          name: q.name,
          hints: { format: q.format, provider: q.provider, providerProject: q.provider_project },
          importedBy: ctx.state.principal?.userId ?? 'unknown',
        });
        ctx.status = r.created ? 201 : 200;
        ctx.body = r.invoice;
      },
    },
    {
      method: 'GET',
      path: `${P}/invoices`,
      operationId: 'listInvoices',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: "The project's invoices, latest days first",
      responses: { 200: { description: 'The invoices', schema: 'InvoiceList' } },
      async handler(ctx) {
        ctx.body = await finance.invoices.list(ctx.state.projectId!);
      },
    },
    {
      method: 'GET',
      path: `${P}/invoices/:invoice_id`,
      operationId: 'getInvoice',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'One invoice',
      responses: {
        200: { description: 'The invoice', schema: 'Invoice' },
        404: { description: 'No such invoice in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await finance.invoices.get(ctx.state.projectId!, ctx.params.invoice_id!);
      },
    },
    {
      method: 'DELETE',
      path: `${P}/invoices/:invoice_id`,
      operationId: 'deleteInvoice',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Delete an invoice and its lines (admin)',
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such invoice in this project', schema: 'Error' } },
      async handler(ctx) {
        await finance.invoices.delete(ctx.state.projectId!, ctx.params.invoice_id!);
        ctx.status = 204;
      },
    },
    {
      method: 'GET',
      path: `${P}/reconciliation`,
      operationId: 'getReconciliation',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'ReconciliationQuery',
      summary:
        "A month's invoices beside our spend, per UTC day and model: the difference and the executions that explain it " +
        '(unpriced, missing usage, failed), invoice lines not traced, our spend not invoiced; as JSON, CSV or Parquet',
      responses: {
        200: {
          description:
            'The reconciliation (JSON), or the monthly report: text/csv or application/vnd.apache.parquet, one line per row and a total line',
          schema: 'Reconciliation',
        },
      },
      async handler(ctx) {
        const q = ctx.state.query as { month: string; provider?: string; format: ReportFormat };
        const report = await finance.reconciliation.reconcile(ctx.state.projectId!, monthOf(q.month), q.provider);
        await answer(ctx, finance, q.format, `reconciliation-${ctx.state.projectId}-${q.month}`, report, RECONCILIATION_COLUMNS, () =>
          reconciliationLines(report),
        );
      },
    },
    {
      method: 'GET',
      path: `${P}/statements`,
      operationId: 'getStatement',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'StatementQuery',
      summary:
        "A month's chargeback statement per user, tag, agent or API key: one line per value, adding up to the project's spend " +
        'exactly (tags: each execution split evenly among its tags); as JSON, CSV or Parquet',
      responses: {
        200: {
          description: 'The statement (JSON), or its lines and a total line as text/csv or application/vnd.apache.parquet',
          schema: 'Statement',
        },
        422: { description: 'by=tag for a month whose executions raw-data retention removed (it cannot balance)', schema: 'Error' },
      },
      async handler(ctx) {
        const q = ctx.state.query as { month: string; by: StatementDimension; format: ReportFormat };
        const s = await finance.statements.statement(ctx.state.projectId!, monthOf(q.month), q.by);
        await answer(ctx, finance, q.format, `statement-${ctx.state.projectId}-${q.month}-${q.by}`, s, STATEMENT_COLUMNS, () =>
          statementLines(s),
        );
      },
    },
  ];
}
