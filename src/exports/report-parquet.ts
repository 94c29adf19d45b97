// Reports computed by the service (a reconciliation, a chargeback statement) as Parquet, written by
// the engine like the executions' export (parquet-export.ts): the rows go to ClickHouse as one
// JSON Lines parameter read by the table function format(JSONEachRow, <structure>, …), typed by
// the report's structure (money as Decimal(38, 9) from its decimal text: exact). Embedded: the
// engine writes the file itself (INSERT INTO FUNCTION file); server: its Parquet answer is streamed
// to the file, the parameters sent in a multipart body (a statement of 100,000 users is megabytes).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import type { ParquetFile } from './parquet-export.ts';

/** A column of a report: its name and ClickHouse type (String, Decimal(38, 9), Int64, Nullable(Date), Array(String), Bool). */
export interface ReportColumn {
  name: string;
  type: string;
}

const SETTINGS = { output_format_parquet_string_as_string: 1, engine_file_truncate_on_insert: 1 } as const;
const SELECT = 'SELECT * FROM format(JSONEachRow, {structure:String}, {rows:String})';

export function createReportParquet(ch: ClickHouseStore, scratchDir: string) {
  async function writeFile(
    columns: readonly ReportColumn[],
    rows: ReadonlyArray<Record<string, unknown>>,
    dest: string,
  ): Promise<ParquetFile> {
    const params = {
      structure: columns.map((c) => `${c.name} ${c.type}`).join(', '),
      rows: rows.map((r) => JSON.stringify(r)).join('\n'),
    };
    await fs.promises.mkdir(path.dirname(dest), { recursive: true });
    if (ch.mode === 'embedded') {
      const settings = Object.entries(SETTINGS)
        .map(([k, v]) => `${k} = ${v}`)
        .join(', ');
      await ch.command(`INSERT INTO FUNCTION file({parquet_dest:String}, 'Parquet') ${SELECT} SETTINGS ${settings}`, {
        ...params,
        parquet_dest: dest,
      });
    } else {
      const rs = await ch.client.query({
        query: SELECT,
        format: 'Parquet',
        query_params: params,
        clickhouse_settings: SETTINGS,
        use_multipart_params_auto: true,
      });
      // ResultSet.stream() splits rows at line ends (text formats); Parquet is the raw body.
      const raw = (rs as unknown as { consume(): Readable }).consume();
      await pipeline(raw, fs.createWriteStream(dest));
    }
    const hash = crypto.createHash('sha256');
    await pipeline(fs.createReadStream(dest), hash);
    return { path: dest, bytes: (await fs.promises.stat(dest)).size, sha256: hash.digest('hex') };
  }

  return {
    writeFile,
    /** An on-demand report's file, as a stream that removes the file once read (or abandoned). */
    async temporary(
      columns: readonly ReportColumn[],
      rows: ReadonlyArray<Record<string, unknown>>,
    ): Promise<{ stream: fs.ReadStream; bytes: number }> {
      const dest = path.join(scratchDir, `${crypto.randomUUID()}.parquet`);
      try {
        const file = await writeFile(columns, rows, dest);
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

export type ReportParquet = ReturnType<typeof createReportParquet>;
