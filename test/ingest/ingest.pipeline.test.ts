// The loader's pipeline keeps its stages in order: while batch N is settled, batch N+1 is stored,
// but N+1's check for traces stored before runs after N's spans are stored, and N+1 is settled
// (its fresh traces leased) after N's settling marked its traces for read-back. A trace whose tool
// span comes in one batch and whose root and chat span come in the next is therefore read back
// whole: its execution is written once (version 1, every span), never first from the second batch
// alone and then corrected. (With both orderings broken the test sees version 1 with two spans,
// cancelled by version 2: checked.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { decodeTraceBody, encodeSpans } from '../../src/ingest/span-encoding.ts';
import { traceFlags } from '../../src/ingest/span-loader.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    AUTH_REQUIRED: 'false',
    // One ~40 KiB record per batch, both records waiting when the loader takes the first.
    INGEST_LOAD_BATCH_BYTES: String(64 * 1024),
    INGEST_LOAD_INTERVAL_MS: '400',
    TRACE_DEBOUNCE_MS: '1500',
  });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const TRACE = 'c0ffee00000000000000000000000001';
const pad = 'x'.repeat(40_000); // makes each request's record fill a batch
const span = (spanId: string, over: Record<string, unknown>) => ({
  trace_id: TRACE,
  span_id: spanId,
  span_kind: 'INTERNAL',
  start_time_ns: '1763800000000000000',
  end_time_ns: '1763800001000000000',
  status_code: 'OK',
  ...over,
});
const post = (spans: object[]) =>
  fetch(`${svc.url}/api/v1/traces`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ spans }) });

describe(`the loader's pipeline (${mode} mode)`, () => {
  it('a trace split over two consecutive batches is read back whole, written once', async () => {
    const tool = span('0000000000000003', {
      parent_span_id: '0000000000000001',
      span_name: 'execute_tool get_weather',
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', pad },
    });
    const root = span('0000000000000001', {
      span_name: 'invoke_agent weather',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather', pad },
    });
    const chat = span('0000000000000002', {
      parent_span_id: '0000000000000001',
      span_kind: 'CLIENT',
      span_name: 'chat gpt-4o-mini',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 10,
      },
    });
    expect((await post([tool])).status).toBe(200);
    expect((await post([root, chat])).status).toBe(200);
    await svc.domain.flush();
    expect(svc.domain.traces.loader.stats.batches).toBeGreaterThanOrEqual(2);

    const ch = svc.stores.clickhouse;
    const rows = () =>
      ch.query<{ version: string; sign: number; span_count: number }>(
        'SELECT version, sign, span_count FROM executions WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY version, sign',
        { p: 'default', t: TRACE },
      );
    await until(async () => (await rows()).length > 0, 'the execution of the split trace');
    await new Promise((r) => setTimeout(r, 2_500)); // a wrong early write would be corrected by now
    expect(await rows()).toEqual([{ version: '1', sign: 1, span_count: 3 }]);
  });

  const executionsOf = (trace: string) =>
    svc.stores.clickhouse.query<{ version: string; sign: number; span_count: number; tokens_in: string }>(
      'SELECT version, sign, span_count, tokens_in FROM executions WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY version, sign',
      { p: 'default', t: trace },
    );
  const agentTrace = (trace: string, tokens: number) => [
    span('00000000000000b1', { trace_id: trace, span_name: 'invoke_agent a', attributes: { 'gen_ai.operation.name': 'invoke_agent' } }),
    span('00000000000000b2', {
      trace_id: trace,
      parent_span_id: '00000000000000b1',
      span_kind: 'CLIENT',
      span_name: 'chat gpt-4o-mini',
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': tokens },
    }),
    span('00000000000000b3', {
      trace_id: trace,
      parent_span_id: '00000000000000b1',
      span_name: 'execute_tool t',
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' },
    }),
  ];

  /**
   * Records of the ingest log as the ingest path writes them, appended in the order given (the
   * log's group commit: the loader takes them as one batch). `legacy`: without what each record
   * holds of its traces, as the version before this one wrote them.
   */
  const appendAll = async (requests: object[][], legacy = false) => {
    const encoder = await svc.stores.clickhouse.encoderOf('spans');
    const seqs = await Promise.all(
      requests.map((spans) => {
        const body = Buffer.from(JSON.stringify({ spans }));
        const encoded = encodeSpans('default', decodeTraceBody({ format: 'json', body }), encoder, '2026-11-24 07:00:00.000');
        const header = { p: 'default', n: encoded.rows, t: encoded.traceIds, c: encoded.columns };
        return svc.domain.traces.log.append(legacy ? header : { ...header, f: traceFlags(encoded) }, Buffer.from(encoded.payload));
      }),
    );
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b)); // in the order given
  };

  it("a trace whose spans come in three requests of one batch, among other traces' requests, is assembled from the batch whole, once", async () => {
    // The loader decodes a batch's records one at a time and summarises a trace once the last
    // record holding spans of it is decoded: its root's record comes first here, so a trace
    // summarised any earlier would miss its other spans.
    const split = 'c0ffee00000000000000000000000002';
    const whole = ['c0ffee00000000000000000000000003', 'c0ffee00000000000000000000000004'];
    const [root, chat, tool] = agentTrace(split, 40);
    const stats = svc.domain.traces.loader.stats;
    const before = { fresh: stats.assembledFresh, readBack: stats.markedForReadBack, batches: stats.batches };
    await appendAll([[root!], agentTrace(whole[0]!, 7), [chat!], agentTrace(whole[1]!, 9), [tool!]]);
    await svc.domain.flush();
    expect(stats.batches - before.batches).toBe(1);
    expect(stats.assembledFresh - before.fresh).toBe(3);
    expect(stats.markedForReadBack - before.readBack).toBe(0);
    expect(await executionsOf(split)).toEqual([{ version: '1', sign: 1, span_count: 3, tokens_in: '40' }]);
    expect(await executionsOf(whole[0]!)).toEqual([{ version: '1', sign: 1, span_count: 3, tokens_in: '7' }]);
    expect(await executionsOf(whole[1]!)).toEqual([{ version: '1', sign: 1, span_count: 3, tokens_in: '9' }]);
  });

  it('records written before headers said what they hold (an ingest log replayed after an upgrade) are read for it', async () => {
    // A whole trace is assembled from the log; a trace of which the batch holds only a child (its
    // root comes later) is not, but marked for read-back.
    const trace = 'c0ffee00000000000000000000000005';
    const rootless = 'c0ffee00000000000000000000000006';
    const stats = svc.domain.traces.loader.stats;
    const before = { fresh: stats.assembledFresh, readBack: stats.markedForReadBack, batches: stats.batches };
    await appendAll([agentTrace(trace, 11), [agentTrace(rootless, 5)[1]!]], true);
    await svc.domain.flush();
    expect(stats.batches - before.batches).toBe(1);
    expect(stats.assembledFresh - before.fresh).toBe(1);
    expect(stats.markedForReadBack - before.readBack).toBe(1);
    expect(await executionsOf(trace)).toEqual([{ version: '1', sign: 1, span_count: 3, tokens_in: '11' }]);
  });
});
