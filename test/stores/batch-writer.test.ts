// The batching writer against the real executions table in chDB: batches, retries with the same
// dedup token (a lost acknowledgement stores nothing twice, in the table or its daily-spend
// view), backpressure, failure reporting, and the flush at close.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseSettings } from '@clickhouse/client';
import { DomainError } from '../../src/errors.ts';
import { toHttpError } from '../../src/http/errors.ts';

/** How the HTTP edge answers a writer's error (src/http/errors.ts maps domain errors to statuses). */
const asHttp = (err: unknown) => {
  expect(err).toBeInstanceOf(DomainError);
  return toHttpError(err)!;
};
import { BatchWriter, type InsertFn } from '../../src/stores/batch-writer.ts';
import { createLogger } from '../../src/logger.ts';
import { createStores, type Stores } from '../../src/stores/index.ts';
import { migrate } from '../../src/stores/migrate.ts';
import { dropTestDatabases, testEnv } from '../helpers/env.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';
import fs from 'node:fs';
import path from 'node:path';

const logger = createLogger({ logLevel: 'silent' });
let stores: Stores;
beforeAll(async () => {
  stores = await createStores((await testEnv()).config, logger);
  await migrate(stores, logger);
});
afterAll(async () => {
  await stores?.close();
  await dropTestDatabases();
});

const row = (project: string, i: number, cost = '0.000123') => ({
  project_id: project,
  started_at: `2026-11-0${1 + (i % 3)} 10:00:00.000`,
  trace_id: `t-${i}`,
  version: 1,
  sign: 1,
  ended_at: '2026-11-01 10:00:01.000',
  received_at: '2026-11-01 10:00:01.000',
  source: 'api',
  model: 'm',
  provider: 'p',
  cost_usd: cost,
  cost_source: 'computed',
});

const realInsert: InsertFn = (table, rows, settings) => stores.clickhouse.insert(table, rows, settings);
const options = {
  table: 'executions',
  maxQueueRows: 10_000,
  maxQueueBytes: 10_000_000,
  maxBatchRows: 100,
  flushIntervalMs: 20,
  maxAttempts: 3,
  backoffMs: 10,
};

async function count(project: string) {
  const [r] = await stores.clickhouse.query<{ n: string; cost: string }>(
    'SELECT count() AS n, toString(sum(cost_usd)) AS cost FROM executions WHERE project_id = {p:String}',
    { p: project },
  );
  const [d] = await stores.clickhouse.query<{ cost: string; n: string }>(
    "SELECT toString(sum(cost_usd)) AS cost, toString(sum(executions)) AS n FROM spend_by_dims WHERE project_id = {p:String} AND grain = 'day'",
    { p: project },
  );
  return { rows: Number(r!.n), cost: r!.cost, dailyCost: d!.cost, dailyExecutions: Number(d!.n) };
}

describe('batch writer', () => {
  it('batches by size and interval; 1,000 × 0.000123 sums to 0.123 exactly, in the table and in daily spend', async () => {
    const w = new BatchWriter(realInsert, options, logger);
    await Promise.all(Array.from({ length: 1000 }, (_, i) => w.write([row('w-batch', i)], 100)));
    expect(await count('w-batch')).toEqual({ rows: 1000, cost: '0.123', dailyCost: '0.123', dailyExecutions: 1000 });
    expect(w.stats.batches).toBeGreaterThanOrEqual(10);
    expect(w.stats.writtenRows).toBe(1000);
    await w.close();
  });

  it('a retry after a lost acknowledgement stores nothing twice (same dedup token)', async () => {
    let calls = 0;
    const tokens: string[] = [];
    const lossy: InsertFn = async (table, rows, settings: ClickHouseSettings) => {
      calls++;
      tokens.push(String(settings.insert_deduplication_token));
      await realInsert(table, rows, settings); // stored...
      if (calls === 1) throw new Error('socket hang up'); // ...but the acknowledgement is lost
    };
    const w = new BatchWriter(lossy, options, logger);
    await Promise.all(Array.from({ length: 50 }, (_, i) => w.write([row('w-dedup', i, '0.5')], 100)));
    expect(calls).toBe(2);
    expect(tokens[0]).toBe(tokens[1]);
    expect(w.stats.retries).toBe(1);
    expect(await count('w-dedup')).toEqual({ rows: 50, cost: '25', dailyCost: '25', dailyExecutions: 50 });
    await w.close();
  });

  it('a full queue refuses with 503 + Retry-After before queuing anything', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const blocked: InsertFn = async (t, r, s) => {
      await gate;
      await realInsert(t, r, s);
    };
    const w = new BatchWriter(blocked, { ...options, maxQueueRows: 5, maxBatchRows: 2 }, logger);
    const accepted = Array.from({ length: 5 }, (_, i) => w.write([row('w-full', i)], 10));
    const refused = await w.write([row('w-full', 99)], 10).catch((e: unknown) => e);
    expect(asHttp(refused).status).toBe(503);
    expect(asHttp(refused).headers['Retry-After']).toBe('1');
    expect(w.stats.refusedRows).toBe(1);
    release();
    await Promise.all(accepted);
    await w.close();
    expect((await count('w-full')).rows).toBe(5); // the refused row was never written
    expect(await stores.clickhouse.query("SELECT trace_id FROM executions WHERE project_id = 'w-full' AND trace_id = 't-99'")).toEqual([]);
  });

  it('a batch that fails every attempt rejects its callers with 503 and is counted', async () => {
    const failing: InsertFn = async () => {
      throw new Error('ClickHouse down');
    };
    const w = new BatchWriter(failing, { ...options, maxAttempts: 2 }, logger);
    const err = await w.write([row('w-fail', 1)], 10).catch((e: unknown) => e);
    expect(asHttp(err).status).toBe(503);
    expect(w.stats.failedRows).toBe(1);
    expect(w.stats.queuedRows).toBe(0);
    await w.close();
  });

  it('a write the disk refuses (ENOSPC) is answered 503 at once: no retry, which would meet the same full disk', async () => {
    // A real ENOSPC: a write to a full tmpfs.
    const disk = mountTmpfs(1 << 20);
    let attempts = 0;
    const full: InsertFn = async () => {
      attempts++;
      await fs.promises.writeFile(path.join(disk.dir, 'rows.bin'), Buffer.alloc(2 << 20));
    };
    try {
      const w = new BatchWriter(full, { ...options, maxAttempts: 5, backoffMs: 1_000 }, logger);
      const err = await w.write([row('w-enospc', 1)], 10).catch((e: unknown) => e);
      expect(asHttp(err).status).toBe(503);
      expect(attempts).toBe(1);
      expect(w.stats.retries).toBe(0);
      await w.close();
    } finally {
      disk.unmount();
    }
  });

  it('values the store refuses fail only the caller that sent them (422); the others in the batch are stored', async () => {
    // A real refusal: a cost that Decimal(18, 9) cannot hold. The batch holds both callers' rows.
    const w = new BatchWriter(realInsert, { ...options, flushIntervalMs: 50 }, logger);
    const good = w.write([row('w-split', 1), row('w-split', 2)], 100);
    const bad = w.write([row('w-split', 3, '1e30')], 100).catch((e: unknown) => e);
    await good;
    const err = asHttp(await bad);
    expect(err.status).toBe(422);
    expect((await count('w-split')).rows).toBe(2);
    expect(w.stats.failedRows).toBe(1);
    await w.close();
  });

  it('a request with more rows than the queue can ever hold is 413, not a 503 to retry forever', async () => {
    const w = new BatchWriter(realInsert, { ...options, maxQueueRows: 3 }, logger);
    const err = asHttp(
      await w
        .write(
          [1, 2, 3, 4].map((i) => row('w-413', i)),
          100,
        )
        .catch((e: unknown) => e),
    );
    expect(err.status).toBe(413);
    await w.close();
  });

  it('close flushes what is queued and then refuses', async () => {
    const w = new BatchWriter(realInsert, { ...options, flushIntervalMs: 60_000, maxBatchRows: 1000 }, logger);
    const pending = Promise.all(Array.from({ length: 7 }, (_, i) => w.write([row('w-close', i)], 10)));
    await w.close();
    await pending;
    expect((await count('w-close')).rows).toBe(7);
    expect(asHttp(await w.write([row('w-close', 8)], 10).catch((e: unknown) => e)).status).toBe(503);
  });
});
