// CLICKHOUSE_READ_URL: dashboards and exports read through `stores.clickhouseReads`, everything
// else through `stores.clickhouse`. No second ClickHouse server runs here, so the reads store is a
// second real store over the same engine, recording the queries it is given (it delegates every
// call: the answers are the engine's); the composition decides which store each reader gets.
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDomain, type Domain } from '../../src/compose/domain.ts';
import { createLogger } from '../../src/logger.ts';
import { createBroadcast } from '../../src/stores/broadcast.ts';
import { createClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.ts';
import { createStores, type Stores } from '../../src/stores/index.ts';
import { testEnv } from '../helpers/env.ts';

const logger = createLogger({ logLevel: 'silent' });
let stores: Stores;
let reads: ClickHouseStore;
let domain: Domain;
const seen: string[] = [];

/** A real store whose queries and commands are recorded (by their query-log comment, else their text) as they pass. */
function recording(store: ClickHouseStore): ClickHouseStore {
  return {
    ...store,
    query: (sql, params, comment) => (seen.push(comment ?? sql), store.query(sql, params, comment)),
    queryBinary: (sql, params, comment) => (seen.push(comment ?? sql), store.queryBinary(sql, params, comment)),
    command: (sql, params, settings) => (seen.push(sql), store.command(sql, params, settings)),
  };
}

beforeAll(async () => {
  const t = await testEnv();
  const primary = await createStores(t.config, logger);
  reads = createClickHouse(t.config);
  stores = { ...primary, clickhouseReads: recording(reads) };
  domain = createDomain(t.config, stores, createBroadcast(stores.redis, logger), logger, { enqueue: async () => undefined });
});
afterAll(async () => {
  await domain?.close();
  await reads?.close();
  await stores?.close();
});

describe('CLICKHOUSE_READ_URL', () => {
  it('is a store of its own when set (same database, user and topology), the primary itself when not', async () => {
    const base = { CLICKHOUSE_URL: 'http://127.0.0.1:1', DATA_DIR: path.join(os.tmpdir(), 'traceloom-read-url-unused') };
    const config = loadConfig({ ...base, CLICKHOUSE_READ_URL: 'http://127.0.0.1:2', CLICKHOUSE_TOPOLOGY: 'cloud' });
    expect(config.clickhouse.readUrl).toBe('http://127.0.0.1:2');
    const store = createClickHouse(config, undefined, config.clickhouse.readUrl);
    expect(store.mode).toBe('server');
    expect(store.topology).toEqual({ kind: 'cloud' });
    await store.close();
    expect(loadConfig(base).clickhouse.readUrl).toBeUndefined();
  });

  it('stats, template analytics, spend breakdowns and exports (Parquet, CSV, JSON Lines) read there', async () => {
    seen.length = 0;
    await domain.spend.stats.project('p-read', {});
    await domain.spend.analytics.prompt('p-read', 'support', {});
    await domain.spend.breakdowns.breakdown('p-read', { group_by: ['model'], window: '7d' });
    const dest = path.join(os.tmpdir(), `traceloom-read-url-${process.pid}.parquet`);
    await domain.executions.parquet.writeFile({ sql: 'project_id = {p:String}', params: { p: 'p-read' } }, dest);
    const before = seen.length;
    for await (const row of domain.executions.exports.export('p-read', {})) expect(row).toBeUndefined(); // none stored
    expect(seen.length).toBeGreaterThan(before);
    expect(seen).toEqual(
      expect.arrayContaining(['spend.stats.daily', 'spend.analytics.totals', 'spend.analytics.daily', 'spend.breakdown.spend_by_dims']),
    );
    expect(seen.some((s) => /^INSERT INTO FUNCTION file\(.*'Parquet'\)/.test(s))).toBe(true);
  });

  it("reads that must see every write (lists, details, the evaluators' scans) do not", async () => {
    seen.length = 0;
    await domain.executions.listing.list('p-read', { limit: 10, offset: 0 });
    for await (const row of domain.executions.listing.export('p-read', {})) expect(row).toBeUndefined();
    await domain.executions.detail.get('p-read', 'no-such-trace', false);
    expect(seen).toEqual([]);
  });
});
