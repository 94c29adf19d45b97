// Scheduled exports: per project, each UTC day's executions as one Parquet file (written by the
// engine: parquet-export.ts) with a manifest JSON naming what was written, to EXPORT_DIR and/or an
// S3-compatible bucket (EXPORT_S3_*). A day is exported once (execution_exports in PostgreSQL),
// EXPORT_DELAY_MS after it ended; days missed while the service was down are caught up.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { JobProcessor, JobRunner } from '../jobs/runner.ts';
import type { ExportStore } from './export-repository.ts';
import type { ParquetExport } from './parquet-export.ts';
import type { ExecutionListing } from '../executions/execution-listing-repository.ts';
import { putObject } from './s3-put.ts';
import { EXPORTED_DIMENSION_COLUMNS } from '../reads/spend-dimensions.ts';

export const EXPORT_JOB = 'executions-export';
const DAY_MS = 86_400_000;
const PARQUET_COLUMNS = [
  'trace_id',
  'agent_id',
  'provider',
  'model',
  'tokens_in',
  'tokens_out',
  'latency_ms',
  'cost_usd',
  'cost_source',
  'status',
  'started_at',
  'has_templates',
  'template_count',
  'span_count',
  'source',
  'user_id',
  'session_id',
  'tags',
  'metadata',
  ...EXPORTED_DIMENSION_COLUMNS,
];

export interface ScheduledExportDeps {
  config: Config['exports'];
  scratchDir: string;
  store: ExportStore;
  parquet: ParquetExport;
  queries: Pick<ExecutionListing, 'filterOf'>;
  /** UTC days holding executions of a project (from the spend rollup) */
  daysWithExecutions(projectId: string, from: string, to: string): Promise<string[]>;
  now: () => Date;
  logger: Logger;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Writes `dest` whole or not at all (a reader never sees half a file). */
export async function writeAtomically(dest: string, write: (tmp: string) => Promise<void>): Promise<void> {
  await fs.promises.mkdir(path.dirname(dest), { recursive: true });
  const tmp = `${dest}.${process.pid}.tmp`;
  try {
    await write(tmp);
    await fs.promises.rename(tmp, dest);
  } finally {
    await fs.promises.rm(tmp, { force: true });
  }
}

export function createScheduledExport(deps: ScheduledExportDeps) {
  const { config } = deps;
  const enabled = config.dir !== undefined || config.s3 !== undefined;
  const targets = [...(config.dir ? ['dir'] : []), ...(config.s3 ? ['s3'] : [])].join('+');

  /** One project's day: the Parquet file and its manifest, to every target; returns the manifest. */
  async function exportDay(projectId: string, day: string, exportedAt: Date) {
    const start = new Date(`${day}T00:00:00.000Z`);
    const end = new Date(start.getTime() + DAY_MS);
    const filter = deps.queries.filterOf(projectId, { start: start.toISOString(), end: end.toISOString() });
    const name = `${day}.parquet`;
    const local = path.join(deps.scratchDir, `${projectId}-${name}`);
    try {
      const file = await deps.parquet.writeFile(filter, local);
      const manifest = {
        project_id: projectId,
        day,
        start: start.toISOString(),
        end: end.toISOString(),
        format: 'parquet',
        files: [{ path: name, rows: await deps.parquet.rowsOf(local, filter), bytes: file.bytes, sha256: file.sha256 }],
        columns: PARQUET_COLUMNS,
        exported_at: exportedAt.toISOString(),
      };
      const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
      if (config.dir) {
        const dir = path.join(config.dir, projectId, 'executions');
        await writeAtomically(path.join(dir, name), (tmp) => fs.promises.copyFile(local, tmp));
        await writeAtomically(path.join(dir, `${day}.manifest.json`), (tmp) => fs.promises.writeFile(tmp, manifestText));
      }
      if (config.s3) {
        const key = `${config.s3.prefix}${projectId}/executions/`;
        await putObject(config.s3, `${key}${name}`, local, file.sha256, 'application/vnd.apache.parquet');
        const manifestFile = `${local}.manifest.json`;
        await fs.promises.writeFile(manifestFile, manifestText);
        try {
          await putObject(
            config.s3,
            `${key}${day}.manifest.json`,
            manifestFile,
            crypto.createHash('sha256').update(manifestText).digest('hex'),
            'application/json',
          );
        } finally {
          await fs.promises.rm(manifestFile, { force: true });
        }
      }
      return manifest;
    } finally {
      await fs.promises.rm(local, { force: true });
    }
  }

  /** Every project's due days not exported yet: yesterday always (an empty day too), earlier days of the catch-up window that hold executions. */
  async function run(at: Date = deps.now()): Promise<number> {
    if (!enabled) return 0;
    const now = at.getTime();
    // The last day whose end is at least the delay ago.
    const lastDue = Math.floor((now - config.delayMs) / DAY_MS) * DAY_MS - DAY_MS;
    const first = dayOf(lastDue - (config.catchUpDays - 1) * DAY_MS);
    const last = dayOf(lastDue);
    let written = 0;
    for (const projectId of await deps.store.projects()) {
      const done = await deps.store.exported(projectId, first, last);
      const days = new Set(await deps.daysWithExecutions(projectId, first, last));
      days.add(last); // the latest due day always, an empty one too: its manifest says so
      for (const day of [...days].sort()) {
        if (done.has(day)) continue;
        const manifest = await exportDay(projectId, day, at);
        if (await deps.store.record(projectId, day, targets, manifest)) written++;
        deps.logger.info(
          { project_id: projectId, day, rows: manifest.files[0]!.rows, bytes: manifest.files[0]!.bytes },
          'executions exported',
        );
      }
    }
    return written;
  }

  return {
    enabled,
    run,
    exportDay,
    ...periodicExportJob(EXPORT_JOB, enabled, config.intervalMs, run),
  };
}

/**
 * The job of an export written on a schedule (the daily Parquet, the monthly statements): `run`
 * every `intervalMs` and once at boot, when enabled; three attempts a minute apart.
 */
export function periodicExportJob(name: string, enabled: boolean, intervalMs: number, run: () => Promise<unknown>) {
  return {
    processor: {
      name,
      attempts: 3,
      backoffMs: 60_000,
      async process() {
        await run();
      },
    } as JobProcessor,
    async schedule(runner: JobRunner): Promise<void> {
      if (!enabled) return;
      await runner.every(name, intervalMs, {});
      await runner.enqueue(name, {}, { jobId: 'boot' });
    },
  };
}

export type ScheduledExport = ReturnType<typeof createScheduledExport>;
