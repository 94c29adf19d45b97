// PostgreSQL side of invoices (schema/postgres/023): the invoices of a project, their lines, and the
// invoice cost of a month by UTC day and model key, summed exactly by the database (numeric).
import type { PostgresStore, Queryable } from '../stores/postgres.ts';

export interface InvoiceRow extends Record<string, unknown> {
  invoice_id: string;
  format: string;
  provider: string;
  name: string;
  content_sha256: string;
  bytes: string;
  first_day: string;
  last_day: string;
  line_count: number;
  total_usd: string;
  imported_by: string;
  imported_at: Date;
}

export interface NewInvoice {
  invoiceId: string;
  format: string;
  provider: string;
  name: string;
  contentSha256: string;
  bytes: number;
  importedBy: string;
  lines: Array<{ day: string; provider: string; model: string; modelKey: string; costUsd: string; ref: string; description: string }>;
}

/** An invoice's cost of one UTC day and model key (exact text), with the models and lines behind it. */
export interface InvoiceCell extends Record<string, unknown> {
  day: string;
  model_key: string;
  cost_usd: string;
  models: string[];
  refs: string[];
  invoice_ids: string[];
}

const COLUMNS = `invoice_id::text, format, provider, name, content_sha256, bytes::text, to_char(first_day, 'YYYY-MM-DD') AS first_day,
  to_char(last_day, 'YYYY-MM-DD') AS last_day, line_count, total_usd::text, imported_by, imported_at`;

/** Lines per INSERT: 7 parameters each, well under PostgreSQL's 65,535 bound parameters. */
const LINES_PER_INSERT = 5_000;

export function createInvoiceRepository(pg: PostgresStore) {
  return {
    async byHash(projectId: string, sha256: string): Promise<InvoiceRow | undefined> {
      const [r] = await pg.query<InvoiceRow>(`SELECT ${COLUMNS} FROM invoices WHERE project_id = $1 AND content_sha256 = $2`, [
        projectId,
        sha256,
      ]);
      return r;
    },

    /** A line of another invoice billed by the same provider on the same day as one of these (the first found). */
    async overlapping(
      projectId: string,
      pairs: Array<{ provider: string; day: string }>,
    ): Promise<{ invoice_id: string; provider: string; day: string } | undefined> {
      const [r] = await pg.query<{ invoice_id: string; provider: string; day: string }>(
        `SELECT l.invoice_id::text AS invoice_id, l.provider, to_char(l.day, 'YYYY-MM-DD') AS day
         FROM invoice_lines l
         WHERE l.project_id = $1 AND (l.provider, l.day) IN (SELECT p, d FROM unnest($2::text[], $3::date[]) AS t(p, d))
         ORDER BY l.day LIMIT 1`,
        [projectId, pairs.map((x) => x.provider), pairs.map((x) => x.day)],
      );
      return r;
    },

    /**
     * Stores the invoice and its lines in one transaction; undefined when the same content was
     * stored meanwhile (the unique index decides: the caller answers with that one).
     */
    async insert(projectId: string, inv: NewInvoice): Promise<InvoiceRow | undefined> {
      return pg.transaction(async (tx: Queryable) => {
        const days = inv.lines.map((l) => l.day).sort();
        const [row] = await tx.query<InvoiceRow>(
          `INSERT INTO invoices (invoice_id, project_id, format, provider, name, content_sha256, bytes, first_day, last_day, line_count, total_usd, imported_by)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8::date, $9::date, $10, coalesce(sum(c), 0), $11 FROM unnest($12::numeric[]) AS c
           ON CONFLICT (project_id, content_sha256) DO NOTHING
           RETURNING ${COLUMNS}`,
          [
            inv.invoiceId,
            projectId,
            inv.format,
            inv.provider,
            inv.name,
            inv.contentSha256,
            inv.bytes,
            days[0],
            days[days.length - 1],
            inv.lines.length,
            inv.importedBy,
            inv.lines.map((l) => l.costUsd),
          ],
        );
        if (!row) return undefined;
        for (let from = 0; from < inv.lines.length; from += LINES_PER_INSERT) {
          const chunk = inv.lines.slice(from, from + LINES_PER_INSERT);
          await tx.query(
            `INSERT INTO invoice_lines (invoice_id, project_id, line_no, day, provider, model, model_key, cost_usd, raw_ref, description)
             SELECT $1, $2, $3 + n, d, p, m, k, c, r, s
             FROM unnest($4::date[], $5::text[], $6::text[], $7::text[], $8::numeric[], $9::text[], $10::text[]) WITH ORDINALITY AS t(d, p, m, k, c, r, s, n)`,
            [
              inv.invoiceId,
              projectId,
              from,
              chunk.map((l) => l.day),
              chunk.map((l) => l.provider),
              chunk.map((l) => l.model),
              chunk.map((l) => l.modelKey),
              chunk.map((l) => l.costUsd),
              chunk.map((l) => l.ref),
              chunk.map((l) => l.description),
            ],
          );
        }
        return row;
      });
    },

    async list(projectId: string): Promise<InvoiceRow[]> {
      return pg.query<InvoiceRow>(`SELECT ${COLUMNS} FROM invoices WHERE project_id = $1 ORDER BY first_day DESC, imported_at DESC`, [
        projectId,
      ]);
    },

    async get(projectId: string, invoiceId: string): Promise<InvoiceRow | undefined> {
      const [r] = await pg.query<InvoiceRow>(`SELECT ${COLUMNS} FROM invoices WHERE project_id = $1 AND invoice_id = $2::uuid`, [
        projectId,
        invoiceId,
      ]);
      return r;
    },

    async delete(projectId: string, invoiceId: string): Promise<boolean> {
      const rows = await pg.query('DELETE FROM invoices WHERE project_id = $1 AND invoice_id = $2::uuid RETURNING invoice_id', [
        projectId,
        invoiceId,
      ]);
      return rows.length > 0;
    },

    /** The invoices' cost of [first, last] by day and model key, optionally of the lines of one provider. */
    async cells(projectId: string, first: string, last: string, provider?: string): Promise<InvoiceCell[]> {
      return pg.query<InvoiceCell>(
        `SELECT to_char(l.day, 'YYYY-MM-DD') AS day, l.model_key, sum(l.cost_usd)::text AS cost_usd,
           array_agg(DISTINCT l.model ORDER BY l.model) AS models,
           (array_agg(l.raw_ref ORDER BY l.invoice_id, l.line_no))[1:5] AS refs,
           array_agg(DISTINCT l.invoice_id::text ORDER BY l.invoice_id::text) AS invoice_ids
         FROM invoice_lines l
         WHERE l.project_id = $1 AND l.day BETWEEN $2::date AND $3::date AND ($4::text IS NULL OR l.provider = $4)
         GROUP BY l.day, l.model_key ORDER BY l.day, l.model_key`,
        [projectId, first, last, provider ?? null],
      );
    },
  };
}

export type InvoiceRepository = ReturnType<typeof createInvoiceRepository>;
