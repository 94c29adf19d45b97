// Executions as Parquet, written by the engine (FORMAT Parquet): the live rows (FINAL, sign = 1)
// matching the list filters, newest first, in the columns of the JSON Lines export plus the
// attribution ones (user, session, tags, metadata). Embedded: the engine writes the file itself
// (INSERT INTO FUNCTION file); server: its Parquet response is streamed to the file. Either way the
// result is a local file, so neither the process nor the request holds the export in memory.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import type { ExecutionListing } from '../executions/execution-listing-repository.ts';

const SETTINGS = {
  output_format_parquet_string_as_string: 1,
  engine_file_truncate_on_insert: 1,
  do_not_merge_across_partitions_select_final: 1,
} as const;

export interface ParquetFile {
  path: string;
  bytes: number;
  sha256: string;
}

export function createParquetExport(ch: ClickHouseStore, repo: Pick<ExecutionListing, 'parquetSelect' | 'countLive'>, scratchDir: string) {
  /** Writes the live executions matching `filter` to `dest` (a local path), replacing it. */
  async function writeFile(filter: { sql: string; params: Record<string, unknown> }, dest: string): Promise<ParquetFile> {
    const select = repo.parquetSelect(filter);
    await fs.promises.mkdir(path.dirname(dest), { recursive: true });
    if (ch.mode === 'embedded') {
      const settings = Object.entries(SETTINGS)
        .map(([k, v]) => `${k} = ${v}`)
        .join(', ');
      await ch.command(`INSERT INTO FUNCTION file({parquet_dest:String}, 'Parquet') ${select} SETTINGS ${settings}`, {
        ...filter.params,
        parquet_dest: dest,
      });
    } else {
      const rs = await ch.client.exec({ query: `${select} FORMAT Parquet`, query_params: filter.params, clickhouse_settings: SETTINGS });
      await pipeline(rs.stream, fs.createWriteStream(dest));
    }
    const hash = crypto.createHash('sha256');
    await pipeline(fs.createReadStream(dest), hash);
    return { path: dest, bytes: (await fs.promises.stat(dest)).size, sha256: hash.digest('hex') };
  }

  return {
    writeFile,
    /** The rows written: read back from the file by the embedded engine, counted by the server otherwise. */
    async rowsOf(file: string, filter: { sql: string; params: Record<string, unknown> }): Promise<number> {
      if (ch.mode !== 'embedded') return repo.countLive(filter);
      const [r] = await ch.query<{ n: string }>(
        `SELECT toString(count()) AS n FROM file({f:String}, 'Parquet')`,
        { f: file },
        'executions.parquet.rows',
      );
      return Number(r?.n ?? 0);
    },
    /** The file of an on-demand export, as a stream that removes the file once read (or abandoned). */
    async temporary(filter: { sql: string; params: Record<string, unknown> }): Promise<{ stream: fs.ReadStream; bytes: number }> {
      const dest = path.join(scratchDir, `${crypto.randomUUID()}.parquet`);
      try {
        const file = await writeFile(filter, dest);
        const stream = fs.createReadStream(dest);
        stream.on('close', () => void fs.promises.rm(dest, { force: true }));
        return { stream, bytes: file.bytes };
      } catch (err) {
        await fs.promises.rm(dest, { force: true });
        throw err;
      }
    },
  };
}

export type ParquetExport = ReturnType<typeof createParquetExport>;
