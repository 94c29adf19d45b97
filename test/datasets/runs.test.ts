// Experiment runs (docs/datasets.md): items linked to the executions they produced through span
// attributes (a real OTLP exporter) give the same answer as the same work linked by API; a link
// that arrives before its execution is assembled joins it once it is; failed items count as
// failed; the trace ids of a run are what an evaluator would score; bad links are a 4xx naming
// the item.
import { context, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { exporting, type Exporting } from '../helpers/otel.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

let svc: TestService;
let otel: Exporting;
beforeAll(async () => {
  svc = await startTestService();
  otel = exporting(svc.url, { protocol: 'proto', gzip: false, service: 'experiment-runner' });
});
afterAll(async () => {
  await otel?.shutdown();
  await svc?.close();
  await dropTestDatabases();
});

const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** What the code under test does for one item: an agent span and one chat call; returns the trace id. */
function runItem(tracer: Tracer, question: string, tokens: { in: number; out: number }, link?: { runId: string; itemId: string }): string {
  const base = Date.now() - 5_000;
  const root = tracer.startSpan('invoke_agent qa', {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'qa-agent',
      ...(link ? { 'traceloom.dataset.run_id': link.runId, 'traceloom.dataset.item_id': link.itemId } : {}),
    },
    startTime: new Date(base),
  });
  const chat = tracer.startSpan(
    'chat gpt-4o',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': tokens.in,
        'gen_ai.usage.output_tokens': tokens.out,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: question }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: `answer to ${question}` }], finish_reason: 'stop' },
        ]),
      },
      startTime: new Date(base + 10),
    },
    trace.setSpan(context.active(), root),
  );
  chat.end(new Date(base + 810));
  root.end(new Date(base + 1_000));
  return root.spanContext().traceId;
}

const ITEMS = [
  { input: 'Capital of France?', tokens: { in: 100, out: 20 } },
  { input: 'Capital of Peru?', tokens: { in: 300, out: 50 } },
  { input: 'Capital of Chad?', tokens: { in: 50, out: 5 } },
];

/** The run's answer without what differs by construction between two runs (ids, names, trace ids, times, how linked). */
function comparable(run: Record<string, any>) {
  return {
    totals: run.totals,
    items: run.items.map((i: Record<string, any>) => ({
      ...i,
      trace_id: i.trace_id ? 'T' : null,
      linked_by: 'X',
      execution: i.execution ? { ...i.execution, started_at: 'S' } : null,
      scores: Object.fromEntries(Object.entries(i.scores as Record<string, any>).map(([k, v]) => [k, { ...v, score_id: 'I' }])),
    })),
  };
}

describe(`experiment runs (${mode} mode)`, () => {
  it('a run linked through span attributes answers exactly as the same run linked through the API', async () => {
    const ds = (await call('POST', '/datasets', { name: 'capitals' })).body;
    const items = (
      await call(
        'POST',
        `/datasets/${ds.dataset_id}/items`,
        ITEMS.map((i) => ({ input: i.input, expected_output: 'x' })),
      )
    ).body.items as Array<{ item_id: string }>;
    const made = await call('POST', `/datasets/${ds.dataset_id}/runs`, {
      name: 'otel',
      prompts: [{ prompt_id: 'qa', version: 7 }],
      model: 'gpt-4o',
      metadata: { commit: 'abc' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({
      name: 'otel',
      prompts: [{ prompt_id: 'qa', version: 7 }],
      model: 'gpt-4o',
      metadata: { commit: 'abc' },
    });
    const viaOtel = made.body.run_id as string;
    const viaApi = (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'api', model: 'gpt-4o' })).body.run_id as string;

    // The code runs items 0 and 1 under each run; item 2 fails before any call in both.
    const apiTraces: string[] = [];
    const otelTraces: string[] = [];
    for (const [i, it] of ITEMS.slice(0, 2).entries()) {
      otelTraces.push(runItem(otel.tracer, it.input, it.tokens, { runId: viaOtel, itemId: items[i]!.item_id }));
      apiTraces.push(runItem(otel.tracer, it.input, it.tokens));
    }
    await otel.flush();
    const linked = await call(
      'POST',
      `/datasets/${ds.dataset_id}/runs/${viaApi}/items`,
      apiTraces.map((t, i) => ({ item_id: items[i]!.item_id, trace_id: t })),
    );
    expect([linked.status, linked.body]).toEqual([200, { linked: 2 }]);
    for (const run of [viaApi, viaOtel]) {
      const failed = await call('POST', `/datasets/${ds.dataset_id}/runs/${run}/items`, {
        item_id: items[2]!.item_id,
        status: 'failed',
        error: 'rate limited',
      });
      expect(failed.status).toBe(200);
    }
    // The same judgement of each item's execution under both runs.
    for (const [i, value] of [0.9, 0.4].entries()) {
      for (const t of [apiTraces[i]!, otelTraces[i]!]) {
        expect((await call('POST', '/scores', { trace_id: t, name: 'correct', value: i === 0, data_type: 'BOOLEAN' })).status).toBe(201);
        expect((await call('POST', '/scores', { trace_id: t, name: 'quality', value })).status).toBe(201);
      }
    }

    const answer = async (run: string) => (await call('GET', `/datasets/${ds.dataset_id}/runs/${run}`)).body;
    const [otelRun, apiRun] = await Promise.all(
      [viaOtel, viaApi].map((run) =>
        until(async () => {
          const r = await answer(run);
          return r.totals.items.linked === 3 && r.totals.items.awaiting_execution === 0 ? r : undefined;
        }, `run ${run} joined to its executions`),
      ),
    );
    expect(otelRun.items.map((i: { linked_by: string }) => i.linked_by)).toEqual(['otel', 'otel', 'api']);
    expect(otelRun.items.map((i: { trace_id: string }) => i.trace_id)).toEqual([...otelTraces, null]);
    expect(comparable(otelRun)).toEqual(comparable(apiRun));

    // What the answer holds, once.
    expect(apiRun.totals.items).toEqual({ linked: 3, done: 2, failed: 1, awaiting_execution: 0, executions_with_error: 0 });
    expect(apiRun.totals.dataset_items).toBe(3);
    expect(apiRun.items[0]).toMatchObject({
      item_version: 1,
      input: 'Capital of France?',
      status: 'done',
      execution: { status: 'ok', output: 'answer to Capital of France?', latency_ms: 1_000, tokens_in: 100, tokens_out: 20 },
      scores: { correct: { value: true, data_type: 'BOOLEAN' }, quality: { value: 0.9, data_type: 'NUMERIC' } },
    });
    expect(apiRun.items[2]).toMatchObject({ status: 'failed', error: 'rate limited', trace_id: null, execution: null, scores: {} });
    const costs = apiRun.items.slice(0, 2).map((i: { execution: { cost_usd: number } }) => i.execution.cost_usd);
    expect(costs[0]).toBeGreaterThan(0);
    // Exact: the total is the sum of the items' costs in decimal, not in floating point.
    const nanos = (x: number) => BigInt(Math.round(x * 1e9));
    expect(nanos(apiRun.totals.cost.total_usd)).toBe(nanos(costs[0]) + nanos(costs[1]));
    expect(apiRun.totals.latency_ms).toEqual({ p50: 1_000, p95: 1_000 });
    expect(apiRun.totals.scores.quality).toMatchObject({ data_type: 'NUMERIC', n: 2, mean: 0.65 });
    expect(apiRun.totals.scores.correct).toMatchObject({ data_type: 'BOOLEAN', n: 2, rate: 0.5 });

    // The trace ids an evaluator scores for a run (datasets/runs.ts runExecutions).
    expect(await svc.domain.datasets.runs.runExecutions('default', viaOtel)).toEqual(otelTraces);
    await expect(svc.domain.datasets.runs.runExecutions('other-project', viaOtel)).rejects.toThrow('Run not found');
  });

  it('a link stored before its execution is assembled joins it once it is; an edited item keeps the version run', async () => {
    const ds = (await call('POST', '/datasets', { name: 'early-links' })).body;
    const item = (await call('POST', `/datasets/${ds.dataset_id}/items`, { input: 'v1 input' })).body;
    const run = (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'r' })).body;
    const traceId = '0123456789abcdef0123456789abcdef';
    expect(
      (await call('POST', `/datasets/${ds.dataset_id}/runs/${run.run_id}/items`, { item_id: item.item_id, trace_id: traceId })).status,
    ).toBe(200);
    const before = (await call('GET', `/datasets/${ds.dataset_id}/runs/${run.run_id}`)).body;
    expect(before.totals.items).toMatchObject({ linked: 1, done: 1, awaiting_execution: 1 });
    expect(before.items[0]).toMatchObject({ trace_id: traceId, execution: null });
    await call('PATCH', `/datasets/${ds.dataset_id}/items/${item.item_id}`, { input: 'v2 input' });
    const rec = await call('POST', '/executions', {
      trace_id: traceId,
      model: 'gpt-4o',
      cost_usd: 0.123456789,
      latency_ms: 42,
      conversation_history: [
        { role: 'user', content: 'v1 input' },
        { role: 'assistant', content: 'done' },
      ],
    });
    expect(rec.status).toBe(201);
    const after = await until(async () => {
      const r = (await call('GET', `/datasets/${ds.dataset_id}/runs/${run.run_id}`)).body;
      return r.items[0].execution ? r : undefined;
    }, 'the link joined to its execution');
    expect(after.items[0]).toMatchObject({
      item_version: 1,
      input: 'v1 input',
      execution: { output: 'done', cost_usd: 0.123456789, latency_ms: 42 },
    });
    expect(after.totals.cost.total_usd).toBe(0.123456789);
  });

  it('a run lists its items in dataset order past nine of them, and pages without repeating; runs list in creation order', async () => {
    const ds = (await call('POST', '/datasets', { name: 'ordered-links' })).body;
    const items = (
      await call(
        'POST',
        `/datasets/${ds.dataset_id}/items`,
        Array.from({ length: 12 }, (_, i) => ({ input: i })),
      )
    ).body.items;
    const runIds: string[] = [];
    for (let r = 0; r < 11; r++) runIds.push((await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: `r${r}` })).body.run_id);
    const runs = (await call('GET', `/datasets/${ds.dataset_id}/runs?limit=100`)).body.items;
    expect(runs.map((r: { run_id: string }) => r.run_id)).toEqual(runIds);
    // Linked last item first: the answer still follows the dataset.
    const links = [...items].reverse().map((i: { item_id: string }, n: number) => ({ item_id: i.item_id, trace_id: `t${n}` }));
    expect((await call('POST', `/datasets/${ds.dataset_id}/runs/${runIds[0]}/items`, links)).status).toBe(200);
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = (await call('GET', `/datasets/${ds.dataset_id}/runs/${runIds[0]}?limit=5${cursor}`)).body;
      seen.push(...page.items.map((i: { item_id: string }) => i.item_id));
      cursor = page.next_cursor ? `&cursor=${page.next_cursor}` : '';
    } while (cursor);
    expect(seen).toEqual(items.map((i: { item_id: string }) => i.item_id));
  });

  it('span links that name no run of the project are reported in the ingest answer and store nothing', async () => {
    const other = '00000000-0000-4000-8000-00000000abcd';
    const r = await getJson(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        spans: [
          {
            trace_id: 'ab'.repeat(16),
            span_id: 'cd'.repeat(8),
            span_name: 'agent',
            attributes: { 'traceloom.dataset.run_id': other, 'traceloom.dataset.item_id': other },
            start_time_ns: String(BigInt(Date.now()) * 1_000_000n),
            end_time_ns: String(BigInt(Date.now()) * 1_000_000n + 1_000n),
          },
        ],
      }),
    });
    expect(r.status).toBe(200);
    expect(r.body.errors).toEqual([`traceloom.dataset.run_id ${other}: no such run in this project`]);
  });

  it('bad links and runs: a 4xx naming the item or field', async () => {
    const ds = (await call('POST', '/datasets', { name: 'bad-links' })).body;
    const item = (await call('POST', `/datasets/${ds.dataset_id}/items`, { input: 1 })).body;
    const run = (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'r' })).body;
    const links = `/datasets/${ds.dataset_id}/runs/${run.run_id}/items`;
    const stranger = '00000000-0000-4000-8000-000000000001';
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ['POST', `/datasets/${ds.dataset_id}/runs`, { name: 'r' }, 409, /^name: this dataset has a run named "r"$/],
      [
        'POST',
        `/datasets/${ds.dataset_id}/runs`,
        { name: 'p', prompts: [{ prompt_id: 'Bad Id', version: 1 }] },
        400,
        /prompts\.0\.prompt_id: must match pattern/,
      ],
      [
        'POST',
        `/datasets/${ds.dataset_id}/runs`,
        {
          name: 'p',
          prompts: [
            { prompt_id: 'qa', version: 1 },
            { prompt_id: 'qa', version: 1 },
          ],
        },
        422,
        /^prompts\[1\]: repeats qa version 1$/,
      ],
      ['POST', links, { item_id: item.item_id }, 422, /^trace_id: a done item needs the trace_id/],
      [
        'POST',
        links,
        [
          { item_id: item.item_id, trace_id: 't' },
          { item_id: stranger, trace_id: 't' },
        ],
        422,
        /^items\[1\]\.item_id: .* is not an item of this dataset$/,
      ],
      [
        'POST',
        links,
        [
          { item_id: item.item_id, trace_id: 't' },
          { item_id: item.item_id, trace_id: 'u' },
        ],
        422,
        /^items\[1\]\.item_id: repeats items\[0\]\.item_id$/,
      ],
      ['POST', links, { item_id: item.item_id, trace_id: 't', item_version: 2 }, 422, /^item_version: the item has no version 2/],
      ['POST', links, { item_id: 'not-a-uuid', trace_id: 't' }, 400, /item_id: must match format "uuid"/],
      // A batch's schema problems name the item as its domain problems do (items[1].…), and only those.
      [
        'POST',
        links,
        [{ item_id: item.item_id, trace_id: 't' }, { trace_id: 't' }],
        400,
        /^Invalid body: items\[1\]\.item_id: is required$/,
      ],
      ['POST', links, { item_id: item.item_id, status: 'maybe' }, 400, /status: must be one of/],
      ['POST', `/datasets/${ds.dataset_id}/runs/${stranger}/items`, { item_id: item.item_id, trace_id: 't' }, 404, /^Run not found$/],
      ['GET', `/datasets/${ds.dataset_id}/runs/not-a-run`, undefined, 404, /^Run not found$/],
      ['GET', `/datasets/${ds.dataset_id}/runs/compare?runs=${run.run_id}`, undefined, 400, /^runs: give exactly two run ids/],
      [
        'GET',
        `/datasets/${ds.dataset_id}/runs/compare?runs=${run.run_id},${run.run_id}`,
        undefined,
        400,
        /^runs: give two different runs$/,
      ],
      ['GET', `/datasets/${ds.dataset_id}/runs/compare?runs=${run.run_id},${stranger}`, undefined, 404, /^Run not found$/],
      ['GET', `/datasets/${ds.dataset_id}/runs/compare`, undefined, 400, /runs: is required/],
    ];
    for (const [method, path, body, status, detail] of cases) {
      const r = await call(method, path, body);
      expect([r.status, r.body?.detail], `${method} ${path} ${JSON.stringify(body)}`).toEqual([status, expect.stringMatching(detail)]);
    }
    // Nothing of a refused batch was stored.
    expect((await call('GET', `/datasets/${ds.dataset_id}/runs/${run.run_id}`)).body.totals.items.linked).toBe(0);
    const list = await call('GET', `/datasets/${ds.dataset_id}/runs`);
    expect(list.body.items.map((r: { name: string }) => r.name)).toEqual(['r']);
    const refused = await call('DELETE', `/datasets/${ds.dataset_id}`);
    expect([refused.status, refused.body.detail]).toEqual([409, expect.stringMatching(/^The dataset has 1 run: delete them first/)]);
    expect((await call('DELETE', `/datasets/${ds.dataset_id}/runs/${run.run_id}`)).status).toBe(204);
    expect((await call('DELETE', `/datasets/${ds.dataset_id}`)).status).toBe(204);
    expect((await call('GET', `/datasets/${ds.dataset_id}/runs/${run.run_id}`)).status).toBe(404);
  });
});
