// What ingest answers when it cannot make spans durable: a full disk and a store that is down
// give 503 (never a 200 that is later lost), and what was acknowledged is stored once the cause
// is gone.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { getJson, startTestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

afterAll(() => dropTestDatabases());

const hex = (n: number, v: number) => v.toString(16).padStart(n, '0');

/** A request of `n` whole traces (root + chat span with usage), ids from `first`; ~`pad` bytes of messages per chat span. */
function traces(first: number, n: number, pad = 200): string {
  const spans: object[] = [];
  for (let t = first; t < first + n; t++) {
    const start = BigInt(Date.now()) * 1_000_000n;
    spans.push(
      {
        trace_id: hex(32, 0xd0000 + t),
        span_id: hex(16, t * 2 + 1),
        span_name: 'agent',
        attributes: { 'gen_ai.operation.name': 'invoke_agent' },
        start_time_ns: String(start),
        end_time_ns: String(start + 5_000_000n),
      },
      {
        trace_id: hex(32, 0xd0000 + t),
        span_id: hex(16, t * 2 + 2),
        parent_span_id: hex(16, t * 2 + 1),
        span_name: 'chat gpt-4o',
        span_kind: 'CLIENT',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.provider.name': 'openai',
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.usage.output_tokens': 10,
          'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'y'.repeat(pad) }] }]),
        },
        start_time_ns: String(start + 1_000n),
        end_time_ns: String(start + 4_000_000n),
      },
    );
  }
  return JSON.stringify({ spans });
}

const send = (url: string, body: string) =>
  fetch(`${url}/api/v1/traces`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

describe(`ingest durability (${mode} mode)`, () => {
  it('a full disk answers 503 and keeps nothing of that request; the next request once there is room is stored', async () => {
    expect(fs.existsSync('/dev/full')).toBe(true); // a real device that answers every write with ENOSPC
    const svc = await startTestService({ INGEST_LOG_SEGMENT_BYTES: String(64 * 1024) });
    try {
      const logDir = svc.testEnv.config.ingest.logDir;
      const first = await send(svc.url, traces(1, 40, 2_000)); // > 64 KiB: the next write opens segment 2
      expect(first.status).toBe(200);
      fs.symlinkSync('/dev/full', path.join(logDir, `${'2'.padStart(16, '0')}.log`));
      const full = await send(svc.url, traces(100, 2));
      expect(full.status).toBe(503);
      expect(full.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await full.json()).detail).toMatch(/could not be made durable/);
      const third = await send(svc.url, traces(200, 2)); // a new segment, on a disk with room
      expect(third.status).toBe(200);
      await svc.domain.flush();
      const stored = await svc.stores.clickhouse.query<{ trace_id: string }>(
        "SELECT DISTINCT trace_id FROM spans WHERE startsWith(trace_id, '000000000000000000000000000d')",
      );
      const ids = new Set(stored.map((r) => r.trace_id));
      expect(ids.size).toBe(42);
      expect(ids.has(hex(32, 0xd0000 + 100))).toBe(false);
      expect(ids.has(hex(32, 0xd0000 + 200))).toBe(true);
      const refused = await getJson(`${svc.url}/metrics`);
      expect(refused.body).toMatch(/traceloom_ingest_refused_total\{reason="log_write"[^}]*\} 1/);
    } finally {
      await svc.close();
    }
  });

  it('a store that is down: acknowledged spans wait in the log up to its bound, then 503; after a restart every acknowledged span is stored', async () => {
    const t = await testEnv({ INGEST_LOG_MAX_ROWS: '20' });
    const first = await startTestService({}, { env: t });
    const statuses: number[] = [];
    try {
      await first.stores.clickhouse.close(); // ClickHouse goes away: loads fail from now on
      for (let i = 0; i < 8; i++) statuses.push((await send(first.url, traces(300 + i * 2, 2))).status); // 4 spans each
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]); // 20 rows: the bound
      expect(statuses.slice(5)).toEqual([503, 503, 503]);
    } finally {
      await first.close();
    }
    const acked = Array.from({ length: 10 }, (_x, k) => hex(32, 0xd0000 + 300 + k));
    const refused = Array.from({ length: 6 }, (_x, k) => hex(32, 0xd0000 + 310 + k));
    const second = await startTestService({}, { env: t });
    try {
      const stored = async (ids: string[]) =>
        (
          await second.stores.clickhouse.query<{ trace_id: string }>(
            'SELECT DISTINCT trace_id FROM spans WHERE trace_id IN {ids:Array(String)} ORDER BY trace_id',
            { ids },
          )
        ).map((r) => r.trace_id);
      await until(async () => (await stored(acked)).length === 10, 'the acknowledged spans loaded after the restart');
      expect(await stored(acked)).toEqual(acked);
      expect(await stored(refused)).toEqual([]); // the 503s stored nothing
      const e = await until(async () => {
        const r = await getJson(`${second.url}/api/projects/default/executions?limit=500`);
        const mine = (r.body.items ?? []).filter((x: { trace_id: string }) => acked.includes(x.trace_id));
        return mine.length >= 10 ? mine : undefined;
      }, 'their executions');
      expect(e).toHaveLength(10);
    } finally {
      await second.close();
    }
  });

  it('a loader that is behind: once the oldest unloaded record waited beyond INGEST_LOG_MAX_LAG_MS, 503 + Retry-After, and nothing of that request is kept', async () => {
    const t = await testEnv({ INGEST_LOG_MAX_LAG_MS: '300' });
    const first = await startTestService({}, { env: t });
    try {
      await first.stores.clickhouse.close(); // nothing loads from now on: the oldest record only ages
      expect((await send(first.url, traces(400, 1))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 600));
      const behind = await send(first.url, traces(401, 1));
      expect(behind.status).toBe(503);
      expect(behind.headers.get('retry-after')).toBe('1');
      expect(((await behind.json()) as { detail: string }).detail).toMatch(/^Ingest is behind/);
      // Refused before its body is read or decoded: an overloaded process spends nothing on it.
      const undecodable = await fetch(`${first.url}/api/v1/traces`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body: Buffer.from([0xff, 0xff, 0xff]),
      });
      expect(undecodable.status).toBe(503);
      expect((await getJson(`${first.url}/metrics`)).body).toMatch(/traceloom_ingest_refused_total\{reason="behind"[^}]*\} 2/);
    } finally {
      await first.close();
    }
    const second = await startTestService({}, { env: t });
    try {
      const stored = async () =>
        (
          await second.stores.clickhouse.query<{ trace_id: string }>(
            'SELECT DISTINCT trace_id FROM spans WHERE trace_id IN {ids:Array(String)} ORDER BY trace_id',
            { ids: [hex(32, 0xd0000 + 400), hex(32, 0xd0000 + 401)] },
          )
        ).map((r) => r.trace_id);
      await until(async () => (await stored()).length > 0, 'the acknowledged request loaded after the restart');
      expect(await stored()).toEqual([hex(32, 0xd0000 + 400)]);
    } finally {
      await second.close();
    }
  });

  it('records beyond the memory bound wait on disk only and are still loaded, and their traces assembled from the log (no read-back)', async () => {
    const svc = await startTestService({ INGEST_LOG_MEMORY_BYTES: '0', INGEST_LOAD_INTERVAL_MS: '500' });
    try {
      for (let i = 0; i < 3; i++) expect((await send(svc.url, traces(500 + i * 3, 3))).status).toBe(200);
      const ids = Array.from({ length: 9 }, (_x, k) => hex(32, 0xd0000 + 500 + k));
      const mine = await until(async () => {
        const r = await getJson(`${svc.url}/api/projects/default/executions?limit=500`);
        const list = (r.body.items ?? []).filter((x: { trace_id: string }) => ids.includes(x.trace_id));
        return list.length === 9 ? list : undefined;
      }, 'executions of records kept on disk only');
      expect(mine.every((e: { tokens_in: number }) => e.tokens_in === 100)).toBe(true);
      const metrics = (await getJson(`${svc.url}/metrics`)).body as string;
      expect(metrics).toMatch(/traceloom_executions_assembled_total\{path="request"[^}]*\} 9/);
    } finally {
      await svc.close();
    }
  });

  it('a trace assembled from its request and the same trace read back hash alike: a replay writes nothing', async () => {
    const svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
    try {
      const body = traces(700, 3, 3_000);
      expect((await send(svc.url, body)).status).toBe(200);
      await svc.domain.flush();
      const metric = async (path: string) =>
        Number(
          new RegExp(`traceloom_executions_assembled_total\\{path="${path}"[^}]*\\} (\\d+)`).exec(
            (await getJson(`${svc.url}/metrics`)).body,
          )?.[1] ?? 0,
        );
      expect(await metric('request')).toBe(3);
      expect((await send(svc.url, body)).status).toBe(200); // the exporter's retry: read back, same content
      await svc.domain.flush();
      const ids = Array.from({ length: 3 }, (_x, k) => hex(32, 0xd0000 + 700 + k));
      await until(async () => (await svc.domain.traces.pending.nextDue()) === undefined, 'the replayed traces read back');
      expect(await metric('read_back')).toBe(0); // nothing written: the hashes matched
      const rows = await svc.stores.clickhouse.query<{ trace_id: string; version: string; sign: number }>(
        'SELECT trace_id, version, sign FROM executions WHERE trace_id IN {ids:Array(String)} ORDER BY trace_id',
        { ids },
      );
      expect(rows.map((r) => [r.version, r.sign])).toEqual([
        ['1', 1],
        ['1', 1],
        ['1', 1],
      ]);
    } finally {
      await svc.close();
    }
  });
});
