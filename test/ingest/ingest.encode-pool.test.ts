// Encoding workers (INGEST_WORKERS): an export decoded, mapped and encoded on a worker thread is
// byte for byte what the request's own thread makes of it; a bad export is the same 400; a worker
// that dies fails only its waiting requests (503, nothing written) and is replaced. Over HTTP,
// without workers (INGEST_WORKERS=0) the same exports become the same executions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { createLogger } from '../../src/logger.ts';
import { createEncodePool, type EncodePool } from '../../src/ingest/encode-pool.ts';
import { decodeTraceBody, encodeSpans, type TraceBody } from '../../src/ingest/span-encoding.ts';
import { rowEncoder } from '../../src/stores/row-binary.ts';
import { Invalid, Unavailable } from '../../src/errors.ts';
import { buildSpans } from '../../bench/otlp-decode.ts';

let svc: TestService;
let pool: EncodePool;
const receivedAt = '2026-11-23 10:00:00.000';

beforeAll(async () => {
  svc = await startTestService({ INGEST_WORKERS: '0', AUTH_REQUIRED: 'false' });
  pool = createEncodePool({
    size: 2,
    columns: await svc.stores.clickhouse.columnsOf('spans'),
    logger: createLogger({ logLevel: 'silent' }),
  });
});
afterAll(async () => {
  await pool?.close();
  await svc?.close();
  await dropTestDatabases();
});

const protobuf = (n: number): TraceBody => ({ format: 'protobuf', body: ProtobufTraceSerializer.serializeRequest(buildSpans(n, 2, 1))! });
const json = (n: number): TraceBody => ({ format: 'json', body: JsonTraceSerializer.serializeRequest(buildSpans(n, 2, 1))! });

async function inline(body: TraceBody, explain = false) {
  const encoder = rowEncoder(await svc.stores.clickhouse.columnsOf('spans'));
  return encodeSpans('p1', decodeTraceBody(body), encoder, receivedAt, { explain, apiKeyId: explain ? 'k1' : undefined });
}

describe(`encoding workers (${mode} mode)`, () => {
  it('a worker encodes an export byte for byte as the request thread does (protobuf and JSON, explain included)', async () => {
    for (const body of [protobuf(64), json(16), protobuf(1)]) {
      const here = await inline(body, true);
      const there = await pool.encode('p1', body, receivedAt, { explain: true, apiKeyId: 'k1' });
      expect(there.rows).toBe(here.rows);
      expect(there.rows).toBeGreaterThan(0);
      expect(Buffer.from(there.payload).equals(Buffer.from(here.payload))).toBe(true);
      expect(there.traceIds).toEqual(here.traceIds);
      expect(there.genAi).toEqual(here.genAi);
      expect(there.genAi).toContain(true);
      expect(there.columns).toBe(here.columns);
      expect(there.explain).toEqual(here.explain);
    }
  });

  it('many exports at once over two workers: each answer is its own export', async () => {
    const bodies = Array.from({ length: 40 }, (_, i) => protobuf(4 + (i % 5) * 4));
    const answers = await Promise.all(bodies.map((b) => pool.encode('p1', b, receivedAt)));
    for (const [i, a] of answers.entries()) expect(a.rows).toBe(4 + (i % 5) * 4);
  });

  it('a bad export is the same 400 on a worker as on the request thread', async () => {
    for (const body of [
      { format: 'protobuf', body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]) },
      { format: 'json', body: Buffer.from('{"resourceSpans": 7}') },
      { format: 'json', body: Buffer.from('{not json') },
    ] as TraceBody[]) {
      const here = await inline(body).then(
        () => undefined,
        (e: Error) => e,
      );
      const there = await pool.encode('p1', body, receivedAt).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(here).toBeInstanceOf(Invalid);
      expect(there).toBeInstanceOf(Invalid);
      expect(there!.message).toBe(here!.message);
    }
  });

  it('a worker that dies fails its waiting requests with a 503 and is replaced; the next request is encoded', async () => {
    const victim = pool.workers()[0]!;
    const waiting = Array.from({ length: 6 }, () =>
      pool.encode('p1', protobuf(128), receivedAt).then(
        () => 'ok',
        (e: Error) => e,
      ),
    );
    await victim.terminate();
    const outcomes = await Promise.all(waiting);
    const failed = outcomes.filter((o) => o !== 'ok');
    for (const f of failed) expect(f).toBeInstanceOf(Unavailable);
    expect(pool.workers()).toHaveLength(2);
    expect(pool.workers()).not.toContain(victim);
    const after = await Promise.all([1, 2, 3, 4].map(() => pool.encode('p1', protobuf(8), receivedAt)));
    for (const a of after) expect(a.rows).toBe(8);
  });

  it('a closed pool answers 503 at once, never a request left waiting', async () => {
    const closed = createEncodePool({
      size: 1,
      columns: await svc.stores.clickhouse.columnsOf('spans'),
      logger: createLogger({ logLevel: 'silent' }),
    });
    await closed.close();
    await expect(closed.encode('p1', protobuf(4), receivedAt)).rejects.toBeInstanceOf(Unavailable);
  });

  it('without workers (INGEST_WORKERS=0) an export over HTTP is stored and becomes its execution', async () => {
    const body = protobuf(8);
    const res = await fetch(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-protobuf', Accept: 'application/json' },
      body: Buffer.from(body.body),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ spans_ingested: 8, spans_rejected: 0 });
    await svc.domain.flush();
    const list = await getJson(`${svc.url}/api/projects/default/executions?limit=50`);
    expect(list.status).toBe(200);
    expect(list.body.items.length).toBe(2);
  });
});
