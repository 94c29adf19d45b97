// Scheduled chargeback statements (docs/spend.md, "Chargeback statements"), beside the daily
// executions export (src/exports/scheduled-export.ts) and to the same targets (EXPORT_DIR, the
// EXPORT_S3_* bucket): once a month has ended (EXPORT_DELAY_MS after its last midnight), each
// project's statement of it by user, tag, agent and API key, as Parquet and CSV with a manifest,
// under <project>/statements/. Each (project, month, dimension) once (statement_exports); months
// missed while the service was down are caught up for EXPORT_CATCH_UP_DAYS.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { putObject } from '../exports/s3-put.ts';
import { periodicExportJob, writeAtomically } from '../exports/scheduled-export.ts';
import { tableCsv } from '../exports/lines.ts';
import type { ReportParquet } from '../exports/report-parquet.ts';
import type { StatementExportStore } from './statement-export-repository.ts';
import { monthOf } from './month.ts';
import { STATEMENT_COLUMNS, STATEMENT_DIMENSIONS, statementLines, type Statements } from './statements.ts';

export const STATEMENT_EXPORT_JOB = 'statements-export';
const DAY_MS = 86_400_000;

export interface StatementExportDeps {
  config: Config['exports'];
  scratchDir: string;
  store: StatementExportStore;
  projects(): Promise<string[]>;
  statements: Statements;
  parquet: ReportParquet;
  now: () => Date;
  logger: Logger;
}

/** Months ('YYYY-MM') whose whole span ended within [fromMs, toMs]. */
function monthsEndedBetween(fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  const d = new Date(toMs);
  let cursor = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1); // the end of the month before
  while (cursor >= fromMs && cursor > 0) {
    const start = new Date(cursor - 1);
    out.push(start.toISOString().slice(0, 7));
    cursor = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 1);
  }
  return out.reverse();
}

export function createStatementExport(deps: StatementExportDeps) {
  const { config } = deps;
  const enabled = config.dir !== undefined || config.s3 !== undefined;
  const targets = [...(config.dir ? ['dir'] : []), ...(config.s3 ? ['s3'] : [])].join('+');

  async function put(key: string, file: string, contentType: string, sha256: string) {
    await putObject(config.s3!, key, file, sha256, contentType);
  }

  /** One project's statement of a month by one dimension: Parquet, CSV and manifest to every target. */
  async function exportStatement(projectId: string, month: string, dimension: (typeof STATEMENT_DIMENSIONS)[number], at: Date) {
    const s = await deps.statements.statement(projectId, monthOf(month), dimension);
    const rows = statementLines(s);
    const base = `${month}.${dimension}`;
    const local = path.join(deps.scratchDir, `${projectId}-${crypto.randomUUID()}-${base}`);
    const csvText = tableCsv(
      STATEMENT_COLUMNS.map((c) => c.name),
      rows,
    );
    try {
      const parquet = await deps.parquet.writeFile(STATEMENT_COLUMNS, rows, `${local}.parquet`);
      await fs.promises.writeFile(`${local}.csv`, csvText);
      const csvSha = crypto.createHash('sha256').update(csvText).digest('hex');
      const manifest = {
        project_id: projectId,
        month,
        dimension,
        allocation: s.allocation,
        total_usd: s.total.cost_usd,
        lines: s.lines.length,
        files: [
          { path: `${base}.parquet`, format: 'parquet', rows: rows.length, bytes: parquet.bytes, sha256: parquet.sha256 },
          { path: `${base}.csv`, format: 'csv', rows: rows.length, bytes: Buffer.byteLength(csvText), sha256: csvSha },
        ],
        columns: STATEMENT_COLUMNS.map((c) => c.name),
        exported_at: at.toISOString(),
      };
      const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
      if (config.dir) {
        const dir = path.join(config.dir, projectId, 'statements');
        await writeAtomically(path.join(dir, `${base}.parquet`), (tmp) => fs.promises.copyFile(`${local}.parquet`, tmp));
        await writeAtomically(path.join(dir, `${base}.csv`), (tmp) => fs.promises.copyFile(`${local}.csv`, tmp));
        await writeAtomically(path.join(dir, `${base}.manifest.json`), (tmp) => fs.promises.writeFile(tmp, manifestText));
      }
      if (config.s3) {
        const key = `${config.s3.prefix}${projectId}/statements/${base}`;
        await put(`${key}.parquet`, `${local}.parquet`, 'application/vnd.apache.parquet', parquet.sha256);
        await put(`${key}.csv`, `${local}.csv`, 'text/csv', csvSha);
        await fs.promises.writeFile(`${local}.manifest.json`, manifestText);
        await put(
          `${key}.manifest.json`,
          `${local}.manifest.json`,
          'application/json',
          crypto.createHash('sha256').update(manifestText).digest('hex'),
        );
      }
      return manifest;
    } finally {
      await Promise.all(['.parquet', '.csv', '.manifest.json'].map((ext) => fs.promises.rm(`${local}${ext}`, { force: true })));
    }
  }

  /** Every project's statements of the months due and not exported yet; returns how many were written. */
  async function run(at: Date = deps.now()): Promise<number> {
    if (!enabled) return 0;
    const due = at.getTime() - config.delayMs;
    // At least the month that ended last, whatever the catch-up window.
    const months = monthsEndedBetween(due - Math.max(config.catchUpDays, 31) * DAY_MS, due);
    if (months.length === 0) return 0;
    let written = 0;
    for (const projectId of await deps.projects()) {
      const done = await deps.store.exported(projectId, `${months[0]}-01`, `${months[months.length - 1]}-01`);
      for (const month of months) {
        for (const dimension of STATEMENT_DIMENSIONS) {
          if (done.has(`${month} ${dimension}`)) continue;
          try {
            const manifest = await exportStatement(projectId, month, dimension, at);
            if (await deps.store.record(projectId, month, dimension, targets, manifest)) written++;
            deps.logger.info({ project_id: projectId, month, dimension, lines: manifest.lines }, 'statement exported');
          } catch (err) {
            // One statement that cannot balance (a tag statement past retention) does not stop the others.
            deps.logger.warn(
              { project_id: projectId, month, dimension, err: { message: (err as Error).message } },
              'statement not exported',
            );
          }
        }
      }
    }
    return written;
  }

  return {
    enabled,
    run,
    exportStatement,
    ...periodicExportJob(STATEMENT_EXPORT_JOB, enabled, config.intervalMs, run),
  };
}

export type StatementExport = ReturnType<typeof createStatementExport>;
