// No record can stop ingest (docs/traces.md, "Start times" and "Dead letters"): spans whose start
// time no sane clock gives are refused at the request (an OTLP partial success), and a record of
// the ingest log that the store refuses for a reason of its own (here: one written before the start
// window existed, and one a table constraint refuses) is set aside as a dead letter while the rest
// of its batch, and everything after it, is stored; dead letters are listed, replayed and purged.
import { afterAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { agentTrace, appendToIngestLog, spreadOverMonths } from '../helpers/ingest-log.ts';

afterAll(() => dropTestDatabases());

const hex = (n: number, v: number) => v.toString(16).padStart(n, '0');
const trace = agentTrace;

const send = (url: string, body: string) =>
  fetch(`${url}/api/v1/traces`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

async function executionOf(svc: TestService, traceId: string): Promise<{ trace_id: string; tokens_in: number } | undefined> {
  const r = await getJson(`${svc.url}/api/projects/default/executions/${traceId}`);
  return r.status === 200 ? r.body : undefined;
}

const deadLetters = async (svc: TestService) => {
  const r = await getJson(`${svc.url}/api/projects/default/ingest/dead-letters`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.items as Array<{ id: string; spans: number; trace_ids: string[]; error: string; attempts: number }>;
};

/** Appends records straight to a stopped service's ingest log, as a version without the start window wrote them. */
async function appendToLog(svc: TestService, bodies: string[]): Promise<void> {
  const encoder = await svc.stores.clickhouse.encoderOf('spans');
  await svc.close();
  await appendToIngestLog(svc.testEnv.config, encoder, 'default', bodies);
}

describe(`no record can stop ingest (${mode} mode)`, () => {
  it('spans outside the start window are refused as a partial success naming them; a normal export right after is stored, also after a restart', async () => {
    const t = await testEnv();
    let svc = await startTestService({}, { env: t });
    try {
      const poison = await send(svc.url, spreadOverMonths(0xa0001));
      expect(poison.status).toBe(200);
      const body = await poison.json();
      // 1970 + 1,001 months reaches 2053: only the spans of the accepted window are kept.
      const { spanMaxAgeDays, spanMaxFutureDays } = t.config.ingest;
      const window = [Date.now() - spanMaxAgeDays * 86_400_000, Date.now() + spanMaxFutureDays * 86_400_000];
      const inWindow = Array.from({ length: 1_001 }, (_x, i) => Date.UTC(1970, i, 1)).filter((ms) => ms >= window[0]! && ms <= window[1]!);
      const accepted = body.spans_ingested as number;
      expect(Math.abs(accepted - inWindow.length)).toBeLessThanOrEqual(1); // a month's first may cross the edge meanwhile
      expect(accepted).toBeGreaterThan(100);
      expect(body.spans_rejected).toBe(1_001 - accepted);
      expect(body.errors[0]).toMatch(/^span 0 \(0000000000000001\): start time 1970-01-01T00:00:00.000Z is outside the accepted window, /);
      expect(body.errors).toHaveLength(21); // the first 20, and how many more

      const started = Date.now();
      expect((await send(svc.url, JSON.stringify({ spans: trace(0xa0003) }))).status).toBe(200);
      const e = await until(() => executionOf(svc, hex(32, 0xa0003)), 'the export after the poison stored');
      expect(e.tokens_in).toBe(100);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await deadLetters(svc)).toEqual([]);
      // The accepted spans of the spread trace are stored too.
      await svc.domain.flush();
      const [n] = await svc.stores.clickhouse.query<{ n: string }>(
        'SELECT uniqExact(span_id) AS n FROM spans WHERE trace_id = {t:String}',
        {
          t: hex(32, 0xa0001),
        },
      );
      expect(Number(n!.n)).toBe(accepted);
    } finally {
      await svc.close();
    }
    svc = await startTestService({}, { env: t });
    try {
      expect((await send(svc.url, JSON.stringify({ spans: trace(0xa0004) }))).status).toBe(200);
      await until(() => executionOf(svc, hex(32, 0xa0004)), 'an export after the restart stored');
    } finally {
      await svc.close();
    }
  });

  it('a direct record starting outside the window is a 400 naming started_at', async () => {
    const svc = await startTestService();
    try {
      const r = await getJson(`${svc.url}/api/projects/default/executions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ trace_id: 'direct-1970', model: 'gpt-4o', provider: 'openai', started_at: '1970-02-01T00:00:00Z' }),
      });
      expect(r.status).toBe(400);
      expect(r.body.detail).toMatch(/^started_at: start time 1970-02-01T00:00:00.000Z is outside the accepted window/);
    } finally {
      await svc.close();
    }
  });

  it('a record in the log that the store refuses (written before the window) becomes a dead letter at start; the records around it are stored', async () => {
    const t = await testEnv();
    const first = await startTestService({}, { env: t });
    await appendToLog(first, [
      JSON.stringify({ spans: trace(0xb0001) }),
      spreadOverMonths(0xb0002),
      JSON.stringify({ spans: trace(0xb0003) }),
    ]);
    const started = Date.now();
    const svc = await startTestService({}, { env: t });
    try {
      expect((await send(svc.url, JSON.stringify({ spans: trace(0xb0004) }))).status).toBe(200);
      for (const id of [0xb0001, 0xb0003, 0xb0004]) await until(() => executionOf(svc, hex(32, id)), `trace ${id.toString(16)} stored`);
      expect(Date.now() - started).toBeLessThan(30_000);
      const [letter, ...more] = await deadLetters(svc);
      expect(more).toEqual([]);
      expect(letter).toMatchObject({ spans: 1_001, trace_ids: [hex(32, 0xb0002)], attempts: 3 });
      expect(letter!.error).toMatch(/Too many partitions/);
      const metrics = (await getJson(`${svc.url}/metrics`)).body as string;
      expect(metrics).toMatch(/traceloom_ingest_dead_letters\{[^}]*\} 1\n/);
      expect(metrics).toMatch(/traceloom_ingest_dead_lettered_total\{[^}]*\} 1\n/);
      const [n] = await svc.stores.clickhouse.query<{ n: string }>('SELECT count() AS n FROM spans WHERE trace_id = {t:String}', {
        t: hex(32, 0xb0002),
      });
      expect(Number(n!.n)).toBe(0);

      // Another project's admin learns nothing of it.
      const other = await getJson(`${svc.url}/api/projects/other/ingest/dead-letters`);
      expect([200, 403, 404]).toContain(other.status);
      if (other.status === 200) expect(other.body.items).toEqual([]);
      expect([403, 404]).toContain(
        (await getJson(`${svc.url}/api/projects/other/ingest/dead-letters/${letter!.id}`, { method: 'DELETE' })).status,
      );

      // Replayed as it is, it fails again: a dead letter once more (under a new id), never lost.
      const replay = await getJson(`${svc.url}/api/projects/default/ingest/dead-letters/${letter!.id}/replay`, { method: 'POST' });
      expect(replay.status).toBe(202);
      expect(replay.body).toEqual({ id: letter!.id, spans: 1_001 });
      const again = await until(async () => {
        const l = await deadLetters(svc);
        return l.length === 1 && l[0]!.id !== letter!.id ? l[0] : undefined;
      }, 'the replayed record set aside again');
      expect(again.trace_ids).toEqual([hex(32, 0xb0002)]);
      // Purged: gone for good.
      expect((await getJson(`${svc.url}/api/projects/default/ingest/dead-letters/${again.id}`, { method: 'DELETE' })).status).toBe(204);
      expect(await deadLetters(svc)).toEqual([]);
      expect((await getJson(`${svc.url}/api/projects/default/ingest/dead-letters/${again.id}/replay`, { method: 'POST' })).status).toBe(
        404,
      );
    } finally {
      await svc.close();
    }
  });

  it('a record that fails for any reason of its own is set aside, the rest of its batch stored; once fixed, its replay stores it; dead letters outlive a restart', async () => {
    const t = await testEnv({ INGEST_LOAD_INTERVAL_MS: '400' });
    let svc = await startTestService({}, { env: t });
    const ch = svc.stores.clickhouse;
    // A real refusal by the engine: a constraint that the poison span breaks.
    await ch.command("ALTER TABLE spans ADD CONSTRAINT tl_test_no_poison CHECK name != 'poison'");
    try {
      // Three requests within one load interval: one batch.
      const sent = await Promise.all([
        send(svc.url, JSON.stringify({ spans: trace(0xc0001) })),
        send(svc.url, JSON.stringify({ spans: trace(0xc0002, undefined, 'poison') })),
        send(svc.url, JSON.stringify({ spans: trace(0xc0003) })),
      ]);
      expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
      for (const id of [0xc0001, 0xc0003]) await until(() => executionOf(svc, hex(32, id)), `trace ${id.toString(16)} stored`);
      const [letter] = await until(async () => {
        const l = await deadLetters(svc);
        return l.length ? l : undefined;
      }, 'the poison record set aside');
      expect(letter).toMatchObject({ spans: 2, trace_ids: [hex(32, 0xc0002)] });
      expect(letter!.error).toMatch(/tl_test_no_poison/);
      expect(await executionOf(svc, hex(32, 0xc0002))).toBeUndefined();
      // Ingest goes on.
      expect((await send(svc.url, JSON.stringify({ spans: trace(0xc0004) }))).status).toBe(200);
      await until(() => executionOf(svc, hex(32, 0xc0004)), 'an export after the dead letter stored');
    } finally {
      await svc.close();
    }
    svc = await startTestService({}, { env: t });
    try {
      const [letter] = await deadLetters(svc);
      expect(letter).toMatchObject({ spans: 2, trace_ids: [hex(32, 0xc0002)] });
      await svc.stores.clickhouse.command('ALTER TABLE spans DROP CONSTRAINT tl_test_no_poison'); // the fix
      expect((await getJson(`${svc.url}/api/projects/default/ingest/dead-letters/${letter!.id}/replay`, { method: 'POST' })).status).toBe(
        202,
      );
      const e = await until(() => executionOf(svc, hex(32, 0xc0002)), 'the replayed record stored');
      expect(e.tokens_in).toBe(100);
      expect(await deadLetters(svc)).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});
