// OTLP ingest end to end: the real OpenTelemetry SDK and both OTLP exporters (protobuf and JSON,
// gzip on and off) send an agent run to the service on loopback; the execution, its hierarchy
// and its timeline come out right, and daily spend counts the trace once whatever the arrival
// order: children before the root, the root in a later request, duplicate requests, a lost root
// (finalised after the quiet period), and a late child after that (a correction).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cataloguePrice } from '../../src/pricing/catalogue.ts';
import { computeCost } from '../../src/pricing/cost.ts';
import { fromScaled, NANOS } from '../../src/decimal.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { agentRun, exporting, type Protocol } from '../helpers/otel.ts';

let svc: TestService;
const P = 'default';
beforeAll(async () => {
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50', TRACE_QUIET_MS: '2500' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const execution = (traceId: string) => getJson(`${svc.url}/api/projects/${P}/executions/${traceId}`);
/** The execution once it exists and satisfies `ok`. */
const executionWhen = (traceId: string, ok: (e: any) => boolean = () => true) =>
  until(async () => {
    const r = await execution(traceId);
    return r.status === 200 && ok(r.body) ? r.body : undefined;
  }, `execution ${traceId}`);

async function dailySpendOf(): Promise<{ executions: number; cost: string }> {
  const [row] = await svc.stores.clickhouse.query<{ n: string; c: string }>(
    "SELECT sum(executions) AS n, toString(sum(cost_usd)) AS c FROM spend_by_dims WHERE project_id = {p:String} AND grain = 'day'",
    { p: P },
  );
  return { executions: Number(row?.n ?? 0), cost: row?.c ?? '0' };
}

/** What the listing's sum over live executions says, for comparison with daily spend. */
async function listedSpend(): Promise<{ executions: number; cost: string }> {
  const [row] = await svc.stores.clickhouse.query<{ n: string; c: string }>(
    'SELECT count() AS n, toString(sum(cost_usd)) AS c FROM executions FINAL WHERE project_id = {p:String} AND sign = 1',
    { p: P },
  );
  return { executions: Number(row?.n ?? 0), cost: row?.c ?? '0' };
}

/** Stats (from the materialized daily spend) say what the live executions say. */
async function expectStatsAgree(): Promise<void> {
  const listed = await listedSpend();
  const stats = await getJson(`${svc.url}/api/projects/${P}/stats`);
  expect(stats.status).toBe(200);
  expect(stats.body.total_executions).toBe(listed.executions);
  expect(stats.body.total_cost).toBe(Number(listed.cost));
}

function expectedCost(model: string, calls: Array<[number, number]>, at: Date): string {
  const price = cataloguePrice('openai', model, at, 0)!;
  expect(price, `catalogue price of ${model}`).toBeDefined();
  const nanos = calls.reduce(
    (n, [i, o]) => n + computeCost({ tokensIn: i, tokensOut: o, cachedIn: 0, cacheWriteIn: 0 }, price).costNanos,
    0n,
  );
  return fromScaled(nanos, NANOS);
}

describe(`OTLP ingest through the real OpenTelemetry exporters (${mode} mode)`, () => {
  const cases: Array<[Protocol, boolean]> = [
    ['proto', false],
    ['proto', true],
    ['json', false],
    ['json', true],
  ];
  it.each(cases)('%s exporter, gzip %s: one execution with usage, cost, model, agent; hierarchy and timeline', async (protocol, gzip) => {
    const exp = exporting(svc.url, { protocol, gzip });
    const base = Date.now() - 60_000;
    const run = agentRun(exp.tracer, { base });
    run.endRoot();
    await exp.flush();
    await exp.shutdown();

    const e = await executionWhen(run.traceId);
    expect(e).toMatchObject({
      trace_id: run.traceId,
      source: 'otlp',
      provider: 'openai',
      model: 'gpt-4o-2024-08-06',
      agent_id: 'weather-agent',
      tokens_in: 250, // 100 + 150: the agent span's summed usage is not counted again
      tokens_out: 50,
      span_count: 4,
      status: 'ok',
      cost_source: 'computed',
      latency_ms: 2_300,
    });
    expect(e.cost_usd).toBe(
      Number(
        expectedCost(
          'gpt-4o-2024-08-06',
          [
            [100, 20],
            [150, 30],
          ],
          new Date(base),
        ),
      ),
    );
    expect(e.started_at).toBe(new Date(base).toISOString());

    const h = await getJson(`${svc.url}/api/projects/${P}/executions/${run.traceId}/hierarchy`);
    expect(h.status).toBe(200);
    expect(h.body.spans).toHaveLength(1);
    const root = h.body.spans[0];
    expect(root).toMatchObject({ name: 'invoke_agent weather-agent', parent_span_id: null, span_class: 'agent', usage_counted: false });
    expect(root.children.map((c: any) => [c.name, c.span_class, c.usage_counted])).toEqual([
      ['chat gpt-4o-2024-08-06', 'inference', true],
      ['execute_tool get_weather', 'tool', false],
      ['chat gpt-4o-2024-08-06', 'inference', true],
    ]);
    expect(root.children[0]).toMatchObject({ tokens_in: 100, tokens_out: 20, duration_ms: 1_000, kind: 'CLIENT' });
    expect(root.children[0].attributes['gen_ai.request.model']).toBe('gpt-4o');
    expect(root.resource['service.name']).toBe('weather-service');
    expect(root.start_time_ns).toBe((BigInt(base) * 1_000_000n).toString());

    const t = await getJson(`${svc.url}/api/projects/${P}/executions/${run.traceId}/timeline`);
    expect(t.status).toBe(200);
    expect(t.body.events.map((ev: any) => [ev.type, ev.role ?? ev.name, ev.content ?? ev.arguments ?? null])).toEqual([
      ['message', 'system', 'You answer weather questions.'],
      ['message', 'user', 'Weather in Paris?'],
      ['tool_call', 'get_weather', { city: 'Paris' }],
      ['tool_result', 'get_weather', '18°C, sunny'],
      ['message', 'assistant', 'It is 18°C and sunny in Paris.'],
    ]);
    expect(t.body.events.every((ev: any) => typeof ev.span_id === 'string' && typeof ev.timestamp === 'string')).toBe(true);
    expect(t.body.events[3].duration_ms).toBe(250);

    const c = await getJson(`${svc.url}/api/projects/${P}/executions/${run.traceId}/timeline?compact_tools=true`);
    const tools = c.body.events.filter((ev: any) => ev.type === 'tool');
    expect(tools).toEqual([
      expect.objectContaining({
        call_id: 'call_1',
        name: 'get_weather',
        arguments: { city: 'Paris' },
        result: '18°C, sunny',
        is_error: false,
        duration_ms: 250,
      }),
    ]);
    expect(c.body.events.map((ev: any) => ev.type)).toEqual(['message', 'message', 'tool', 'message']);
  });
});

describe(`arrival orders count each trace once (${mode} mode)`, () => {
  const tid = () => crypto.randomUUID().replace(/-/g, '');
  const sid = () => crypto.randomUUID().replace(/-/g, '').slice(0, 16);
  const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
  const llm = (traceId: string, parent: string, at: number, tokensIn: number, tokensOut: number) => ({
    trace_id: traceId,
    span_id: sid(),
    parent_span_id: parent,
    span_name: 'chat gpt-4o-mini',
    span_kind: 'CLIENT',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': tokensIn,
      'gen_ai.usage.output_tokens': tokensOut,
    },
    start_time_ns: ns(at),
    end_time_ns: ns(at + 500),
    status_code: 'OK',
  });
  const rootSpan = (traceId: string, spanId: string, at: number) => ({
    trace_id: traceId,
    span_id: spanId,
    span_name: 'workflow',
    span_kind: 'INTERNAL',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'order-agent' },
    start_time_ns: ns(at),
    end_time_ns: ns(at + 3_000),
    status_code: 'OK',
  });
  const post = (spans: object[]) =>
    getJson(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ spans }),
    });

  it('children first, the root in a later request, every request sent twice: one execution, spend counted once', async () => {
    const before = await dailySpendOf();
    const traceId = tid();
    const rootId = sid();
    const base = Date.now() - 120_000;
    const children = [llm(traceId, rootId, base + 100, 1_000, 100), llm(traceId, rootId, base + 1_000, 2_000, 200)];
    const first = await post(children);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ spans_ingested: 2, executions_created: 1, spans_rejected: 0 });
    expect((await post(children)).body.executions_created).toBe(0); // a retried batch
    await new Promise((r) => setTimeout(r, 400)); // past the debounce: assembled? not without its root
    expect((await execution(traceId)).status).toBe(404);
    const root = [rootSpan(traceId, rootId, base)];
    expect((await post(root)).body.executions_created).toBe(0);
    await post(root);
    const e = await executionWhen(traceId);
    expect(e).toMatchObject({ tokens_in: 3_000, tokens_out: 300, span_count: 3, agent_id: 'order-agent', latency_ms: 3_000 });
    await new Promise((r) => setTimeout(r, 300)); // later sweeps change nothing
    const after = await dailySpendOf();
    expect(after.executions - before.executions).toBe(1);
    expect(after).toEqual(await listedSpend());
    await expectStatsAgree();
    const list = await getJson(`${svc.url}/api/projects/${P}/executions?limit=1000`);
    expect(list.body.items.filter((i: any) => i.trace_id === traceId)).toHaveLength(1);
  });

  it('a lost root is finalised after the quiet period; a late child then corrects it, still counted once', async () => {
    const before = await dailySpendOf();
    const traceId = tid();
    const missingRoot = sid();
    const base = Date.now() - 60_000;
    await post([llm(traceId, missingRoot, base, 500, 50)]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await execution(traceId)).status).toBe(404); // still within the quiet period
    const e = await executionWhen(traceId);
    expect(e).toMatchObject({ tokens_in: 500, tokens_out: 50, span_count: 1 });
    const h = await getJson(`${svc.url}/api/projects/${P}/executions/${traceId}/hierarchy`);
    expect(h.body.spans[0]).toMatchObject({ orphan: true, parent_span_id: missingRoot });

    await post([llm(traceId, missingRoot, base + 1_000, 700, 70)]); // late child
    const corrected = await executionWhen(traceId, (x) => x.tokens_in === 1_200);
    expect(corrected).toMatchObject({ tokens_out: 120, span_count: 2 });
    await new Promise((r) => setTimeout(r, 300));
    const after = await dailySpendOf();
    expect(after.executions - before.executions).toBe(1);
    expect(after).toEqual(await listedSpend());
    await expectStatsAgree();
    const list = await getJson(`${svc.url}/api/projects/${P}/executions?limit=1000`);
    const listed = list.body.items.filter((i: any) => i.trace_id === traceId);
    expect(listed).toHaveLength(1);
    expect(listed[0].tokens_in).toBe(1_200);
  });

  it('odd but valid spans still make one execution: all-zero parent for the root, a parent cycle, absurd usage, a malformed prompt id', async () => {
    const traceId = tid();
    const [a, b] = [sid(), sid()];
    const base = Date.now() - 30_000;
    const root = { ...rootSpan(traceId, sid(), base), parent_span_id: '0000000000000000' };
    const huge = {
      ...llm(traceId, root.span_id, base + 10, 1, 1),
      attributes: {
        ...llm(traceId, '', 0, 0, 0).attributes,
        'gen_ai.usage.input_tokens': 1e21,
        'gen_ai.usage.output_tokens': 5,
        'traceloom.prompt.id': 'bad\u0000id',
      },
    };
    // a and b name each other as parent: a cycle, cut in the hierarchy
    const cycA = { ...llm(traceId, b, base + 20, 10, 1), span_id: a };
    const cycB = { ...llm(traceId, a, base + 30, 20, 2), span_id: b };
    const r = await post([root, huge, cycA, cycB]);
    expect(r.status).toBe(200);
    const e = await executionWhen(traceId);
    expect(e.tokens_in).toBe(Number.MAX_SAFE_INTEGER); // 1e21 clamped to what the column holds exactly
    expect(e.span_count).toBe(4);
    expect(e.usage_warnings.some((w: string) => /bad/.test(w))).toBe(true); // the prompt reference is reported, not fatal
    const h = await getJson(`${svc.url}/api/projects/${P}/executions/${traceId}/hierarchy`);
    expect(h.status).toBe(200);
    const count = (nodes: any[]): number => nodes.reduce((n, x) => n + 1 + count(x.children), 0);
    expect(count(h.body.spans)).toBe(4); // every span once, no cycle
    const rootNode = h.body.spans.find((x: any) => x.span_id === root.span_id);
    expect(rootNode).toMatchObject({ parent_span_id: null });
    expect(rootNode.orphan).toBeUndefined();
    expect(h.body.spans.some((x: any) => x.orphan === true && (x.span_id === a || x.span_id === b))).toBe(true);
  });

  it('a correction keeps the prompt version the execution recorded, though the prompt moved on', async () => {
    const promptId = `support-${sid()}`;
    const create = await getJson(`${svc.url}/api/projects/${P}/prompts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt_id: promptId, type: 'text', template: 'Help {{user}}' }),
    });
    expect(create.status).toBe(201);
    const traceId = tid();
    const rootId = sid();
    const base = Date.now() - 20_000;
    const withPrompt = (span: ReturnType<typeof llm>) => ({ ...span, attributes: { ...span.attributes, 'traceloom.prompt.id': promptId } }); // version: latest
    await post([rootSpan(traceId, rootId, base), withPrompt(llm(traceId, rootId, base + 10, 100, 10))]);
    const first = await executionWhen(traceId);
    expect(first.template_usages).toEqual([expect.objectContaining({ prompt_id: promptId, version_ref: 'latest', version: 1 })]);
    const v2 = await getJson(`${svc.url}/api/projects/${P}/prompts/${promptId}/versions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ template: 'Help {{user}} kindly' }),
    });
    expect(v2.status).toBe(201);
    await post([withPrompt(llm(traceId, rootId, base + 500, 50, 5))]); // a late child: a correction
    const corrected = await executionWhen(traceId, (x) => x.tokens_in === 150);
    expect(corrected.template_usages).toEqual([expect.objectContaining({ prompt_id: promptId, version_ref: 'latest', version: 1 })]);
  });

  it('a trace without a generative-AI span is stored but is no execution', async () => {
    const traceId = tid();
    const r = await post([{ ...rootSpan(traceId, sid(), Date.now() - 5_000), attributes: { 'http.method': 'GET' }, span_name: 'GET /' }]);
    expect(r.body).toMatchObject({ spans_ingested: 1, executions_created: 0 });
    await new Promise((r2) => setTimeout(r2, 500));
    expect((await execution(traceId)).status).toBe(404);
  });
});

describe(`trace assembly survives a restart (${mode} mode)`, () => {
  it('spans stored just before a shutdown still become their execution after the restart', async () => {
    const { testEnv } = await import('../helpers/env.ts');
    const env = await testEnv({ TRACE_DEBOUNCE_MS: '3000', TRACE_QUIET_MS: '600000' });
    const first = await startTestService({}, { env });
    const exp = exporting(first.url, { protocol: 'proto', gzip: false });
    const run = agentRun(exp.tracer);
    run.endRoot();
    await exp.flush();
    await exp.shutdown();
    await first.close(); // before the 3 s debounce: nothing assembled yet (in memory, the pending trace dies with the process)
    const second = await startTestService(
      { TRACE_DEBOUNCE_MS: '50' },
      { env: { ...env, config: { ...env.config, traces: { debounceMs: 50, quietMs: 600_000 } } } },
    );
    try {
      const e = await until(async () => {
        const r = await getJson(`${second.url}/api/projects/${P}/executions/${run.traceId}`);
        return r.status === 200 ? r.body : undefined;
      }, 'the execution after the restart');
      expect(e).toMatchObject({ tokens_in: 250, tokens_out: 50, span_count: 4 });
    } finally {
      await second.close();
    }
  });
});
