// A full disk under a running service, for real (a tmpfs filled with a file, not a mock): writes to
// PostgreSQL answer 503 + Retry-After naming the store and the reason, /api/health is degraded and
// says why, and once space is freed writes work again and health is ok. Embedded mode: DATA_DIR
// (PGlite's files) is the small tmpfs; server mode: the test database lives in a tablespace on
// one. In both modes the ingest log refuses spans before it would take the room kept free for the
// stores (DISK_MIN_FREE_BYTES), while PostgreSQL still writes; and the embedded ClickHouse engine
// (chDB, in both modes here) on a full disk refuses direct records with 503 the same way.
import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, serverEnv, testEnv } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.ts';
import { until } from '../helpers/wait.ts';

const MIB = 1024 * 1024;
const MIN_FREE = 16 * MIB;
let svc: TestService | undefined;
/** DATA_DIR, in both modes. */
let dataDisk: Tmpfs;
/** CHDB_DIR (chDB in both modes: CLICKHOUSE_URL is not set in the test runs). */
let chDisk: Tmpfs;
/** Server mode: the tablespace of the test database. */
let tablespaceDisk: Tmpfs | undefined;
const tablespace = `tl_disk_${crypto.randomBytes(6).toString('hex')}`;

async function asAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: serverEnv.databaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc!.url}/api/projects/default${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const health = () => getJson(`${svc!.url}/api/health`);
let traceSeq = 0;
const sendSpan = () => {
  const start = BigInt(Date.now()) * 1_000_000n;
  const id = ++traceSeq;
  return getJson(`${svc!.url}/api/v1/traces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      spans: [
        {
          trace_id: (0xd15c0000 + id).toString(16).padStart(32, '0'),
          span_id: id.toString(16).padStart(16, '0'),
          span_name: 'work',
          start_time_ns: String(start),
          end_time_ns: String(start + 1_000_000n),
        },
      ],
    }),
  });
};

beforeAll(async () => {
  dataDisk = mountTmpfs(128 * MIB);
  chDisk = mountTmpfs(96 * MIB);
  const overrides: Record<string, string> = {
    DATA_DIR: dataDisk.dir,
    CHDB_DIR: chDisk.dir, // chDB binds one folder per process: this file's one service uses it
    DISK_MIN_FREE_BYTES: String(MIN_FREE),
    INGEST_ATTEMPTS: '2',
  };
  if (mode === 'server') {
    tablespaceDisk = mountTmpfs(32 * MIB, 'postgres');
    const url = new URL(serverEnv.databaseUrl!);
    url.pathname = `/${tablespace}`;
    await asAdmin(async (c) => {
      // DDL takes no bound parameters: the names are ours (random hex), the path a folder we made.
      await c.query(`CREATE TABLESPACE ${tablespace} LOCATION ${c.escapeLiteral(tablespaceDisk!.dir)}`);
      await c.query(`CREATE DATABASE ${tablespace} TABLESPACE ${tablespace}`);
    });
    overrides.DATABASE_URL = url.toString();
  }
  svc = await startTestService({}, { env: await testEnv(overrides) });
});

afterAll(async () => {
  await svc?.close();
  if (mode === 'server') {
    await asAdmin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${tablespace} WITH (FORCE)`);
      await c.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
    });
  }
  tablespaceDisk?.unmount();
  chDisk?.unmount();
  dataDisk?.unmount();
  await dropTestDatabases();
});

describe(`a full disk (${mode} mode)`, () => {
  it('postgres out of disk space: 503 + Retry-After on prompt creation and budget change, health degraded; freed, both work and health is ok', async () => {
    const before = await health();
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ status: 'ok', refusing_writes: [], data_dir: { min_free_bytes: MIN_FREE } });
    expect(before.body.data_dir.free_bytes).toBeGreaterThan(MIN_FREE);

    const disk = mode === 'embedded' ? dataDisk : tablespaceDisk!;
    disk.fill();
    try {
      expect(disk.free()).toBe(0);
      const prompt = await call('POST', '/prompts', { prompt_id: 'on-a-full-disk', type: 'text', template: 'Hello {{name}}' });
      expect(prompt.status, JSON.stringify(prompt.body)).toBe(503);
      expect(prompt.headers.get('retry-after')).toBe('5');
      expect(prompt.body).toEqual({ detail: 'postgres is out of disk space; retry later' });

      const budget = await call('PUT', '/budget', { budget_monthly_usd: 10, alert_threshold_pct: 80, enforcement_mode: 'alert' });
      expect(budget.status, JSON.stringify(budget.body)).toBe(503);
      expect(budget.headers.get('retry-after')).toBe('5');
      expect(budget.body).toEqual({ detail: 'postgres is out of disk space; retry later' });

      const h = await health();
      expect(h.status).toBe(503);
      expect(h.headers.get('retry-after')).toBe('5');
      expect(h.body).toMatchObject({
        status: 'degraded',
        clickhouse: 'ok',
        postgres: 'ok', // it answers: it is its writes that fail
        refusing_writes: [{ store: 'postgres', reason: 'disk_full', at: expect.any(String) }],
      });
      if (mode === 'embedded') {
        // PGlite's files are DATA_DIR's: its free space is under the floor too.
        expect(h.body.data_dir.free_bytes).toBe(0);
        expect(h.body.detail).toBe(`postgres is out of disk space; DATA_DIR has 0 bytes free, under DISK_MIN_FREE_BYTES (${MIN_FREE})`);
      } else {
        expect(h.body.data_dir.free_bytes).toBeGreaterThan(MIN_FREE);
        expect(h.body.detail).toBe('postgres is out of disk space');
      }
    } finally {
      disk.release();
    }

    const prompt = await call('POST', '/prompts', { prompt_id: 'on-a-full-disk', type: 'text', template: 'Hello {{name}}' });
    expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
    const budget = await call('PUT', '/budget', { budget_monthly_usd: 10, alert_threshold_pct: 80, enforcement_mode: 'alert' });
    expect(budget.status, JSON.stringify(budget.body)).toBe(200);
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'ok', clickhouse: 'ok', postgres: 'ok', refusing_writes: [] });
    expect(h.body.detail).toBeUndefined();
  });

  it('the ingest log keeps DISK_MIN_FREE_BYTES free for the stores: spans are refused with 503 while postgres still writes; freed, accepted', async () => {
    expect((await sendSpan()).status).toBe(200);
    dataDisk.fill(MIN_FREE / 2); // under the floor, not full
    try {
      // The log samples free space at most once a second.
      const refused = await until(async () => {
        const r = await sendSpan();
        return r.status === 503 && r;
      }, 'spans refused under the floor');
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body.detail).toMatch(
        /^The disk of the ingest log is nearly full \(\d+ bytes are free on the disk of the ingest log; 16777216 are kept free for the stores\); retry later$/,
      );

      const h = await health();
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({ status: 'degraded', refusing_writes: [] });
      expect(h.body.data_dir.free_bytes).toBeLessThan(MIN_FREE);
      expect(h.body.detail).toMatch(/^DATA_DIR has \d+ bytes free, under DISK_MIN_FREE_BYTES \(16777216\)$/);

      // The room the log left is there for PostgreSQL (PGlite's files are on this disk when embedded).
      const prompt = await call('POST', '/prompts', { prompt_id: 'under-the-floor', type: 'text', template: 'Hi' });
      expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
    } finally {
      dataDisk.release();
    }
    await until(async () => (await sendSpan()).status === 200, 'spans accepted once space is freed');
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('ok');
  });
  it('clickhouse out of disk space: a direct record answers 503 naming it, health degraded; freed, stored and ok', async () => {
    const record = (id: string) => call('POST', '/executions', { trace_id: id, cost_usd: 0.25, model: 'm', provider: 'p' });
    expect((await record('before-full')).status).toBe(201);
    chDisk.fill();
    try {
      const r = await record('on-a-full-disk');
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.headers.get('retry-after')).toBe('5');
      expect(r.body).toEqual({ detail: 'The executions rows could not be stored (clickhouse is out of disk space); retry later' });
      // A score write (answered once stored) is refused the same way, at once: not retried.
      const score = await call('POST', '/scores', { id: 'on-a-full-disk', trace_id: 'before-full', name: 'q', value: 1 });
      expect(score.status, JSON.stringify(score.body)).toBe(503);
      expect(score.headers.get('retry-after')).toBe('5');
      expect(score.body).toEqual({ detail: 'The scores rows could not be stored (clickhouse is out of disk space); retry later' });
      const h = await health();
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({
        status: 'degraded',
        clickhouse: 'ok',
        refusing_writes: [{ store: 'clickhouse', reason: 'disk_full' }],
        detail: 'clickhouse is out of disk space',
      });
    } finally {
      chDisk.release();
    }
    expect((await record('after-full')).status).toBe(201);
    expect((await call('POST', '/scores', { id: 'on-a-full-disk', trace_id: 'before-full', name: 'q', value: 1 })).status).toBe(201);
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'ok', refusing_writes: [] });
  });
});
