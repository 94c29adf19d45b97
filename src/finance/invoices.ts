// Invoices (docs/spend.md, "Invoices and reconciliation"): a provider's cost export imported into a
// project, idempotent by content (the same bytes twice are one invoice: 200 with it), refused when
// it bills a day another invoice of the same provider already bills (409: a month imported twice
// under two exports would double the invoice side of every reconciliation).
import crypto from 'node:crypto';
import { conflict, notFound } from '../errors.ts';
import { fromScaled, NANOS, toScaled } from '../decimal.ts';
import { csvRecords, type CsvRecord } from '../datasets/csv.ts';
import { parseInvoice, type ParseHints } from './invoice-formats.ts';
import { modelKey } from './model-key.ts';
import type { InvoiceRepository, InvoiceRow } from './invoice-repository.ts';

const MAX_CSV_RECORD_CHARS = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface InvoiceImport {
  kind: 'json' | 'csv';
  body: Buffer;
  name?: string;
  hints: ParseHints;
  importedBy: string;
}

/** A sum kept exactly (numeric) → dollars at 9 decimals, half-up, as the answers spell money. */
const nanoText = (exact: string) => fromScaled(toScaled(exact, NANOS), NANOS);

export function presentInvoice(r: InvoiceRow) {
  return {
    invoice_id: r.invoice_id,
    format: r.format,
    provider: r.provider,
    name: r.name,
    first_day: r.first_day,
    last_day: r.last_day,
    lines: r.line_count,
    total_usd: nanoText(r.total_usd),
    content_sha256: r.content_sha256,
    bytes: Number(r.bytes),
    imported_by: r.imported_by,
    imported_at: new Date(r.imported_at).toISOString(),
  };
}

async function recordsOf(text: string): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  async function* whole() {
    yield text;
  }
  for await (const r of csvRecords(whole(), MAX_CSV_RECORD_CHARS)) out.push(r);
  return out;
}

export function createInvoices(repo: InvoiceRepository) {
  return {
    /** Imports a file; `created` false when the same content was imported before (that invoice is answered). */
    async import(
      projectId: string,
      input: InvoiceImport,
    ): Promise<{ created: boolean; invoice: ReturnType<typeof presentInvoice> & { skipped_lines: number } }> {
      const sha256 = crypto.createHash('sha256').update(input.body).digest('hex');
      const known = await repo.byHash(projectId, sha256);
      if (known) return { created: false, invoice: { ...presentInvoice(known), skipped_lines: 0 } };
      const text = input.body.toString('utf8');
      const parsed = parseInvoice(
        input.kind === 'json' ? { kind: 'json', text } : { kind: 'csv', records: await recordsOf(text) },
        input.hints,
      );
      const pairs = [...new Set(parsed.lines.map((l) => `${l.provider}\n${l.day}`))].map((k) => {
        const [provider, day] = k.split('\n') as [string, string];
        return { provider, day };
      });
      const clash = await repo.overlapping(projectId, pairs);
      if (clash)
        throw conflict(
          `invoice: ${clash.day} is already billed by ${clash.provider || 'an unnamed provider'} in invoice ${clash.invoice_id}; ` +
            'delete that invoice first (DELETE …/invoices/{id}) or import an export of other days',
        );
      const invoiceId = crypto.randomUUID();
      const row = await repo.insert(projectId, {
        invoiceId,
        format: parsed.format,
        provider: parsed.provider,
        name: (input.name ?? `${parsed.format} ${parsed.lines.reduce((d, l) => (l.day < d ? l.day : d), parsed.lines[0]!.day)}`).slice(
          0,
          200,
        ),
        contentSha256: sha256,
        bytes: input.body.length,
        importedBy: input.importedBy,
        lines: parsed.lines.map((l) => ({ ...l, modelKey: modelKey(l.model) })),
      });
      if (!row) {
        // The same file, imported concurrently: that one.
        const raced = await repo.byHash(projectId, sha256);
        return { created: false, invoice: { ...presentInvoice(raced!), skipped_lines: parsed.skipped } };
      }
      return { created: true, invoice: { ...presentInvoice(row), skipped_lines: parsed.skipped } };
    },

    async list(projectId: string) {
      return { invoices: (await repo.list(projectId)).map(presentInvoice) };
    },

    async get(projectId: string, invoiceId: string) {
      const row = UUID.test(invoiceId) ? await repo.get(projectId, invoiceId) : undefined;
      if (!row) throw notFound('Invoice');
      return presentInvoice(row);
    },

    async delete(projectId: string, invoiceId: string): Promise<void> {
      if (!UUID.test(invoiceId) || !(await repo.delete(projectId, invoiceId))) throw notFound('Invoice');
    },
  };
}

export type Invoices = ReturnType<typeof createInvoices>;
