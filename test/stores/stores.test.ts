// The store factories: the mode is the one the environment names, and PostgreSQL transactions
// stay isolated in both modes (PGlite is one backend: the pool must not interleave them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createStores, type Stores } from '../../src/stores/index.ts';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { healthyBody } from '../helpers/service.ts';

let stores: Stores;
beforeAll(async () => {
  stores = await createStores((await testEnv()).config, createLogger({ logLevel: 'silent' }));
  await stores.postgres.query('CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)');
  await stores.postgres.query('INSERT INTO counters VALUES (1, 0)');
});
afterAll(async () => {
  await stores?.close();
  await dropTestDatabases();
});

describe(`stores (${mode} mode)`, () => {
  it('are the ones the environment names', async () => {
    expect(stores.postgres.mode).toBe(mode);
    expect(stores.clickhouse.mode).toBe(process.env.CLICKHOUSE_URL ? 'server' : 'embedded');
    if (mode === 'server') {
      expect(stores.redis).toBeDefined();
      expect(await stores.redis!.ping()).toBe(true);
      const [{ version }] = (await stores.postgres.query<{ version: string }>('SELECT version()')) as [{ version: string }];
      expect(version).not.toContain('PGlite');
    } else {
      expect(stores.redis).toBeUndefined();
      const [{ version }] = (await stores.postgres.query<{ version: string }>('SELECT version()')) as [{ version: string }];
      expect(version).toContain('PGlite');
    }
    expect(await stores.health()).toEqual(healthyBody(mode));
  });

  it('concurrent read-modify-write transactions lose no update', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        stores.postgres.transaction(async (tx) => {
          const [row] = await tx.query<{ n: number }>('SELECT n FROM counters WHERE id = 1 FOR UPDATE');
          await new Promise((r) => setTimeout(r, 2));
          await tx.query('UPDATE counters SET n = $1 WHERE id = 1', [row!.n + 1]);
        }),
      ),
    );
    expect(await stores.postgres.query('SELECT n FROM counters WHERE id = 1')).toEqual([{ n: 20 }]);
  });

  it('a failing transaction rolls back without touching a concurrent one', async () => {
    const failing = stores.postgres.transaction(async (tx) => {
      await tx.query('UPDATE counters SET n = n + 100 WHERE id = 1');
      await new Promise((r) => setTimeout(r, 20));
      throw new Error('abort');
    });
    const succeeding = stores.postgres.transaction(async (tx) => {
      await tx.query('UPDATE counters SET n = n + 1 WHERE id = 1');
    });
    await expect(failing).rejects.toThrow('abort');
    await succeeding;
    expect(await stores.postgres.query('SELECT n FROM counters WHERE id = 1')).toEqual([{ n: 21 }]);
  });

  it('a query error is not mistaken for a store outage', async () => {
    const err = await stores.postgres.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect((err as Error).name).not.toBe('StoreUnavailableError');
    const chErr = await stores.clickhouse.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect((chErr as Error).name).not.toBe('StoreUnavailableError');
  });

  it('ClickHouse binds parameters', async () => {
    expect(await stores.clickhouse.query('SELECT {s:String} AS s, {n:UInt32} + 1 AS n', { s: "it's; DROP", n: 41 })).toEqual([
      { s: "it's; DROP", n: '42' },
    ]); // 64-bit integers arrive as strings: exact
  });
});
