// ClickHouse: spans, executions, spend. One client API whether the engine is a server
// (CLICKHOUSE_URL, over HTTP) or embedded (chDB in DATA_DIR/clickhouse, through chdb/connection).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createClient, ClickHouseLogLevel, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import type { Config } from '../config.ts';
import { asStoreError } from './errors.ts';
import type { WriteRefusals } from './write-refusals.ts';
import { nextTurn } from '../event-loop.ts';
import { ByteSink, rowEncoder, type ColumnDef, type RowEncoder } from './row-binary.ts';
import { decodeNamedRows, rowDecoder, type RowDecoder } from './row-binary-decoder.ts';
import { topologyOf, topologySettings, type Topology } from './topology.ts';

/** Values our encoder cannot put in a column (a bad decimal, an unknown type): refused data, not a store that is down. */
export class RowEncodeError extends Error {
  readonly clickhouseCode = '27'; // CANNOT_PARSE_INPUT_ASSERTION_FAILED: what the engine says of such values
}

export type QueryParams = Record<string, unknown>;

export interface RowSink {
  /** Encodes a row; one that no column takes throws RowEncodeError and adds nothing. */
  add(row: object): void;
  /** Rows added. */
  readonly rows: number;
  /** Sends the rows added as one insert. */
  send(settings?: ClickHouseSettings): Promise<void>;
}

export interface ClickHouseStore {
  readonly mode: 'embedded' | 'server';
  /** How migrations are rendered and queries sent (src/stores/topology.ts). */
  readonly topology: Topology;
  /** The underlying client, for streaming reads and bulk inserts. Errors from it are not wrapped. */
  readonly client: ClickHouseClient;
  /** Rows of a SELECT, with `{name:Type}` bound parameters. `comment` names the caller in system.query_log. */
  query<T>(sql: string, params?: QueryParams, comment?: string): Promise<T[]>;
  /**
   * The same rows as `query`, sent by the engine as RowBinary: no JSON written nor parsed, for
   * results of thousands of rows on a hot path (a score write's stamps: 113 → 50 ms for 10,000).
   * Date, DateTime, Decimal and DateTime64 other than (3) are refused: select them with toString().
   * `sql` has no FORMAT clause.
   */
  queryBinary<T>(sql: string, params?: QueryParams, comment?: string): Promise<T[]>;
  /** A statement without a result (DDL, INSERT ... SELECT). */
  command(sql: string, params?: QueryParams, settings?: ClickHouseSettings): Promise<void>;
  /** Rows as objects keyed by column name, sent as RowBinary encoded from the table's own column list. */
  insert(table: string, rows: readonly object[], settings?: ClickHouseSettings): Promise<void>;
  /** Rows of `table` encoded as they come, only their bytes kept, and sent together (as `insert` sends them). */
  rowSink(table: string, expectedRows?: number): Promise<RowSink>;
  /** The encoder of a table's insertable columns (read once from system.columns). */
  encoderOf(table: string): Promise<RowEncoder>;
  /** A table's insertable columns, in order (what `encoderOf` encodes; for an encoder built elsewhere, e.g. on a worker thread). */
  columnsOf(table: string): Promise<ColumnDef[]>;
  /**
   * Rows already encoded by `encoderOf(table)`, as one insert. `columns`: rows encoded with only the
   * table's first `columns` columns (by an encoder of an earlier schema: migrations only append
   * columns), the others taking their defaults.
   */
  /**
   * The decoder of rows encoded by `encoderOf(table)` (with its first `columns` columns when
   * given), reading the `wanted` columns as a read-back would return them.
   */
  decoderOf(table: string, wanted: ReadonlySet<string>, columns?: number): Promise<RowDecoder>;
  insertRowBinary(table: string, payloads: readonly Buffer[], settings?: ClickHouseSettings, columns?: number): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A folder of this store's own for RowBinary batches (several stores may share one engine
 * directory in a process, as tests do); folders that processes no longer running left are removed.
 */
function makeScratchDir(chdbDir: string): string {
  const root = path.join(chdbDir, 'insert-scratch');
  fs.mkdirSync(root, { recursive: true });
  for (const name of fs.readdirSync(root)) {
    const pid = Number(name.split('-')[0]);
    let alive = pid === process.pid;
    if (!alive && pid > 0) {
      try {
        process.kill(pid, 0);
        alive = true;
      } catch (err) {
        alive = (err as NodeJS.ErrnoException).code === 'EPERM';
      }
    }
    if (!alive) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  }
  const dir = path.join(root, `${process.pid}-${crypto.randomUUID()}`);
  fs.mkdirSync(dir);
  return dir;
}

/**
 * `refusals`: where a refused write (NOT_ENOUGH_SPACE, memory limit, read-only...) is recorded for
 * /api/health. `url`: another server of the same database than CLICKHOUSE_URL (CLICKHOUSE_READ_URL).
 */
export function createClickHouse(
  config: Config,
  refusals?: WriteRefusals,
  url: string | undefined = config.clickhouse.url,
): ClickHouseStore {
  /** The store error of `err` (a refusal recorded). */
  const failed = (err: unknown): unknown => {
    refusals?.failed('clickhouse', err);
    return asStoreError('clickhouse', err);
  };
  const ch = config.clickhouse;
  const topology = topologyOf(ch);
  const common = {
    request_timeout: config.timeouts.storeMs,
    log: { level: ClickHouseLogLevel.OFF },
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 as const, ...topologySettings(topology) },
  };
  let client: ClickHouseClient;
  let mode: ClickHouseStore['mode'];
  /** Embedded only: where a RowBinary batch is put for the engine to read with file() (chDB's raw insert takes text formats only). */
  let scratchDir: string | undefined;
  if (url) {
    mode = 'server';
    client = createClient({
      ...common,
      url,
      username: ch.user,
      password: ch.password,
      database: ch.database,
      keep_alive: { enabled: true },
    });
  } else {
    mode = 'embedded';
    // chDB binds one data directory per process: the API and the in-process jobs share it.
    // The embedded engine always uses its `default` database; every statement is unqualified.
    const dir = config.chdbDir;
    fs.mkdirSync(dir, { recursive: true });
    const connection = createChdbConnection({ path: dir });
    scratchDir = makeScratchDir(dir);
    client = createClient({ ...common, connection } as Parameters<typeof createClient>[0]);
  }

  const columns = new Map<string, Promise<{ defs: ColumnDef[]; encoder: RowEncoder }>>();
  function tableColumns(table: string): Promise<{ defs: ColumnDef[]; encoder: RowEncoder }> {
    let c = columns.get(table);
    if (!c) {
      c = (async () => {
        const rs = await client.query({
          query: `SELECT name, type FROM system.columns
                  WHERE database = currentDatabase() AND table = {t:String} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL')
                  ORDER BY position`,
          query_params: { t: table },
          format: 'JSONEachRow',
        });
        const defs = await rs.json<ColumnDef>();
        if (defs.length === 0) throw new Error(`table ${table} has no columns (not migrated?)`);
        return { defs, encoder: rowEncoder(defs) };
      })();
      c.catch(() => columns.delete(table)); // a failed read is tried again next time
      columns.set(table, c);
    }
    return c;
  }

  /** One INSERT of RowBinary bytes: a scratch file read by file() on the embedded engine, the request body on a server. */
  async function sendRowBinary(
    table: string,
    payloads: readonly Buffer[],
    settings: ClickHouseSettings | undefined,
    columns?: number,
  ): Promise<void> {
    const tableDefs = (await tableColumns(table)).defs;
    if (columns !== undefined && (columns < 1 || columns > tableDefs.length))
      throw new Error(`rows of ${table} encoded with ${columns} columns; the table has ${tableDefs.length}`);
    const defs = columns === undefined ? tableDefs : tableDefs.slice(0, columns);
    const list = defs.map((d) => `\`${d.name}\``).join(', ');
    // The embedded engine keeps settings in its session from one statement to the next: an
    // insert without a token must say so, or it inherits the previous batch's token and is
    // dropped as a duplicate.
    const all: ClickHouseSettings = { insert_deduplication_token: '', ...settings };
    if (scratchDir) {
      const structure = defs.map((d) => `\`${d.name}\` ${d.type}`).join(', ');
      const file = path.join(scratchDir, `${crypto.randomUUID()}.bin`);
      await fs.promises.writeFile(file, payloads.length === 1 ? payloads[0]! : Buffer.concat(payloads as Buffer[]));
      try {
        await client.command({
          query: `INSERT INTO ${table} (${list}) SELECT * FROM file({file:String}, 'RowBinary', {structure:String})`,
          query_params: { file, structure },
          clickhouse_settings: all,
        });
      } finally {
        await fs.promises.rm(file, { force: true });
      }
      return;
    }
    await client.exec({
      query: `INSERT INTO ${table} (${list}) FORMAT RowBinary`,
      values: Readable.from(payloads),
      clickhouse_settings: all,
    });
  }

  async function rowSink(table: string, expectedRows = 64): Promise<RowSink> {
    let encoder: RowEncoder;
    try {
      encoder = (await tableColumns(table)).encoder;
    } catch (err) {
      throw asStoreError('clickhouse', err);
    }
    const bytes = new ByteSink(expectedRows * 512);
    let rows = 0;
    return {
      add(row) {
        const at = bytes.pos;
        try {
          encoder.encode(bytes, row as Record<string, unknown>);
        } catch (err) {
          bytes.pos = at;
          throw new RowEncodeError(`a ${table} row cannot be stored: ${(err as Error).message}`);
        }
        rows++;
      },
      get rows() {
        return rows;
      },
      async send(settings) {
        try {
          await sendRowBinary(table, [bytes.view()], settings);
          refusals?.wrote('clickhouse');
        } catch (err) {
          throw failed(err);
        }
      },
    };
  }

  return {
    mode,
    topology,
    client,
    async encoderOf(table: string): Promise<RowEncoder> {
      try {
        return (await tableColumns(table)).encoder;
      } catch (err) {
        throw asStoreError('clickhouse', err);
      }
    },
    async columnsOf(table: string): Promise<ColumnDef[]> {
      try {
        return (await tableColumns(table)).defs;
      } catch (err) {
        throw asStoreError('clickhouse', err);
      }
    },
    async decoderOf(table: string, wanted: ReadonlySet<string>, columns?: number): Promise<RowDecoder> {
      try {
        const defs = (await tableColumns(table)).defs;
        return rowDecoder(columns === undefined ? defs : defs.slice(0, columns), wanted);
      } catch (err) {
        throw asStoreError('clickhouse', err);
      }
    },
    async insertRowBinary(table: string, payloads: readonly Buffer[], settings?: ClickHouseSettings, columns?: number): Promise<void> {
      try {
        await sendRowBinary(table, payloads, settings, columns);
        refusals?.wrote('clickhouse');
      } catch (err) {
        throw failed(err);
      }
    },
    async query<T>(sql: string, params?: QueryParams, comment?: string): Promise<T[]> {
      try {
        const rs = await client.query({
          query: sql,
          query_params: params,
          format: 'JSONEachRow',
          clickhouse_settings: { log_comment: comment ?? '' }, // always set: the embedded session would keep the last one
        });
        return await rs.json<T>();
      } catch (err) {
        throw failed(err);
      }
    },
    async queryBinary<T>(sql: string, params?: QueryParams, comment?: string): Promise<T[]> {
      let output: Buffer;
      try {
        const rs = await client.exec({
          query: `${sql}\nFORMAT RowBinaryWithNamesAndTypes`,
          query_params: params,
          clickhouse_settings: { log_comment: comment ?? '' },
        });
        const chunks: Buffer[] = [];
        for await (const chunk of rs.stream) chunks.push(chunk as Buffer);
        output = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      } catch (err) {
        throw failed(err);
      }
      return decodeNamedRows<T>(output);
    },
    async command(sql: string, params?: QueryParams, settings?: ClickHouseSettings): Promise<void> {
      try {
        await client.command({ query: sql, query_params: params, clickhouse_settings: { insert_deduplication_token: '', ...settings } });
        refusals?.wrote('clickhouse');
      } catch (err) {
        throw failed(err);
      }
    },
    async insert(table: string, rows: readonly object[], settings?: ClickHouseSettings): Promise<void> {
      const sink = await rowSink(table, rows.length);
      for (let i = 0; i < rows.length; i++) {
        sink.add(rows[i]!);
        if ((i & 511) === 511) await nextTurn(); // thousands of rows: requests get their turn
      }
      await sink.send(settings);
    },
    rowSink,
    async ping(): Promise<boolean> {
      try {
        const res = await client.ping();
        return res.success;
      } catch {
        return false;
      }
    },
    async close(): Promise<void> {
      await client.close();
      if (scratchDir) fs.rmSync(scratchDir, { recursive: true, force: true });
    },
  };
}
