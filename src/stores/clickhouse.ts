// ClickHouse: spans, executions, spend. One client API whether the engine is a server
// (CLICKHOUSE_URL, over HTTP) or embedded (chDB in DATA_DIR/clickhouse, through chdb/connection).
import fs from 'node:fs';
import { createClient, ClickHouseLogLevel, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import type { Config } from '../config.ts';
import { asStoreError } from './errors.ts';

export type QueryParams = Record<string, unknown>;

export interface ClickHouseStore {
  readonly mode: 'embedded' | 'server';
  /** Set when the DDL must run ON CLUSTER with replicated engines. */
  readonly cluster: string | undefined;
  /** The underlying client, for streaming reads and bulk inserts. Errors from it are not wrapped. */
  readonly client: ClickHouseClient;
  /** Rows of a SELECT, with `{name:Type}` bound parameters. `comment` names the caller in system.query_log. */
  query<T>(sql: string, params?: QueryParams, comment?: string): Promise<T[]>;
  /** A statement without a result (DDL, INSERT ... SELECT). */
  command(sql: string, params?: QueryParams, settings?: ClickHouseSettings): Promise<void>;
  insert(table: string, rows: readonly object[], settings?: ClickHouseSettings): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export function createClickHouse(config: Config): ClickHouseStore {
  const ch = config.clickhouse;
  const common = {
    request_timeout: config.timeouts.storeMs,
    log: { level: ClickHouseLogLevel.OFF },
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 as const },
  };
  let client: ClickHouseClient;
  let mode: ClickHouseStore['mode'];
  /** Embedded only: chDB's raw insert, which hands the payload to the engine's parser without copying it into SQL. */
  let rawInsert: ((table: string, body: Buffer, settings: Record<string, string | number | boolean>) => Promise<unknown>) | undefined;
  if (ch.url) {
    mode = 'server';
    client = createClient({
      ...common,
      url: ch.url,
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
    rawInsert = (table, body, settings) => connection.chdb.rawInsert({ table, values: body, format: 'JSONEachRow', settings });
    client = createClient({ ...common, connection } as Parameters<typeof createClient>[0]);
  }

  return {
    mode,
    cluster: ch.cluster,
    client,
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
        throw asStoreError('clickhouse', err);
      }
    },
    async command(sql: string, params?: QueryParams, settings?: ClickHouseSettings): Promise<void> {
      try {
        await client.command({ query: sql, query_params: params, clickhouse_settings: { insert_deduplication_token: '', ...settings } });
      } catch (err) {
        throw asStoreError('clickhouse', err);
      }
    },
    async insert(table: string, rows: readonly object[], settings?: ClickHouseSettings): Promise<void> {
      try {
        // The embedded engine keeps settings in its session from one statement to the next: an
        // insert without a token must say so, or it inherits the previous batch's token and is
        // dropped as a duplicate.
        if (rawInsert) {
          const body = Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'));
          // Batches are a few MiB: parse them on every core (the default waits for 10 MiB chunks).
          await rawInsert(table, body, { insert_deduplication_token: '', min_chunk_bytes_for_parallel_parsing: 1_048_576, ...(settings as Record<string, string | number | boolean>) });
          return;
        }
        await client.insert({ table, values: rows as object[], format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: '', ...settings } });
      } catch (err) {
        throw asStoreError('clickhouse', err);
      }
    },
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
    },
  };
}
