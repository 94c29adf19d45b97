// Issue 44 end to end: a project price with a rate per usage type, tiers and conditions (PUT,
// validation naming the field, GET); every dialect's fixture sent as OTLP and each usage type
// priced at its own rate in the stored execution's cost breakdown, exactly; direct records with
// usage details, a service tier and a caller's cost; a tier crossing its boundary (199,999 vs
// 200,001 input tokens); repricing with tiers changing historic costs (direct and OTLP) by exactly
// the dry run's delta.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromScaled, toScaled } from '../../src/decimal.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { DISTINCT_RATES, handCost, RATE_OF, USAGE_FIXTURES } from '../fixtures/usage-types.ts';

let svc: TestService;
const P = '/api/projects/default';
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const nanos = (usd: number | string) => toScaled(usd, 9);
const round9 = (exact18: bigint) => fromScaled((exact18 + 500_000_000n) / 1_000_000_000n, 9);

let seq = 0x4400;
const hex = (n: number) => (++seq).toString(16).padStart(n, '0');
const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();

const executionOf = (traceId: string, check: (e: any) => boolean = () => true) =>
  until(async () => {
    const r = await call('GET', `/executions/${traceId}`);
    return r.status === 200 && check(r.body) ? r.body : undefined;
  }, `execution ${traceId}`);

async function record(body: Record<string, unknown>) {
  const r = await call('POST', '/executions', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

beforeAll(async () => {
  svc = await startTestService({ TRACE_DEBOUNCE_MS: '50' });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`usage types, tiers and conditions (${mode} mode)`, () => {
  it('PUT validates tiers and conditions with 400s naming the field', async () => {
    const base = { input_per_mtok: 1, output_per_mtok: 2 };
    const cases: Array<[object, string]> = [
      [
        {
          ...base,
          tiers: [
            { above_input_tokens: 200_000, input_per_mtok: 2, output_per_mtok: 4 },
            { above_input_tokens: 100_000, input_per_mtok: 3, output_per_mtok: 5 },
          ],
        },
        'tiers[1].above_input_tokens',
      ],
      [
        {
          ...base,
          conditions: [
            { when: { service_tier: 'batch' }, ...base },
            { when: { service_tier: 'BATCH' }, ...base },
          ],
        },
        'conditions[1].when',
      ],
      [{ ...base, conditions: [{ when: {}, ...base }] }, 'when'],
      [{ ...base, conditions: [{ when: { tier: 'x' }, ...base }] }, 'when'],
      [{ ...base, tiers: [{ above_input_tokens: 1, input_per_mtok: 2 }] }, 'output_per_mtok'],
      [{ ...base, web_search_per_call: -1 }, 'web_search_per_call'],
      [
        {
          ...base,
          conditions: [
            {
              when: { batch: true },
              ...base,
              tiers: [
                { above_input_tokens: 5, ...base },
                { above_input_tokens: 5, ...base },
              ],
            },
          ],
        },
        'conditions[0].tiers[1].above_input_tokens',
      ],
    ];
    for (const [body, field] of cases) {
      const r = await call('PUT', '/models/ut-bad', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.detail, JSON.stringify(r.body)).toContain(field);
    }
    expect((await call('GET', '/models?source=project&q=ut-bad')).body.total).toBe(0);
  });

  it('PUT stores every rate, tiers and conditions exactly; GET lists them', async () => {
    const body = {
      ...DISTINCT_RATES,
      match: '^ut-',
      tiers: [{ above_input_tokens: 200_000, input_per_mtok: 2, output_per_mtok: 4, cached_input_per_mtok: 0.2 }],
      conditions: [{ when: { service_tier: 'batch' }, input_per_mtok: 0.5, output_per_mtok: 1 }],
    };
    const r = await call('PUT', '/models/ut-all', body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ ...DISTINCT_RATES, tiers: body.tiers, conditions: body.conditions, match: '^ut-' });
    const listed = (await call('GET', '/models?source=project&q=ut-all')).body.items[0];
    expect(listed).toMatchObject({
      web_search_per_call: 0.01,
      cache_write_1h_per_mtok: 2.5,
      tiers: body.tiers,
      conditions: body.conditions,
    });
  });

  it('every dialect: each usage type priced at its own rate in the execution breakdown, exactly, counted once', async () => {
    const base = Date.now() - 60_000;
    const sent = USAGE_FIXTURES.map((f, i) => ({ f, traceId: hex(32), i }));
    const r = await getJson(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        spans: sent.map(({ f, traceId, i }) => ({
          trace_id: traceId,
          span_id: hex(16),
          span_name: f.spanName,
          span_kind: 'CLIENT',
          attributes: f.attributes,
          ...(f.scope ? { scope_name: f.scope.name, scope_version: f.scope.version } : {}),
          start_time_ns: ns(base + i),
          end_time_ns: ns(base + i + 100),
          status_code: 'OK',
        })),
      }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const { f, traceId } of sent) {
      const e = await executionOf(traceId);
      expect(e.cost_source, f.dialect).toBe('computed');
      const lines = Object.fromEntries(e.cost_breakdown.map((l: any) => [l.usage_type, l]));
      expect(Object.fromEntries(Object.entries(lines).map(([t, l]: [string, any]) => [t, l.quantity])), f.dialect).toEqual(f.lines);
      for (const [t, l] of Object.entries(lines) as Array<[keyof typeof RATE_OF, any]>) {
        expect(l, `${f.dialect} ${t}`).toMatchObject({ rate: RATE_OF[t], source: 'project', rule: 'base rates', counted: true, calls: 1 });
        expect(l.price_id).toMatch(/^project:/);
      }
      const exact = handCost(f.lines);
      expect(
        e.cost_breakdown.reduce((s: bigint, l: any) => s + toScaled(l.cost_usd, 18), 0n),
        f.dialect,
      ).toBe(exact);
      expect(fromScaled(nanos(e.cost_usd), 9), f.dialect).toBe(round9(exact));
      expect(e.tokens_in + e.tokens_out, f.dialect).toBe(f.usage.tokensIn + f.usage.tokensOut);
      if (f.serviceTier) expect(e.pricing_context.service_tier).toBe(f.serviceTier);
    }
  });

  it('a direct record: usage details, a service tier that matches a condition, a caller cost beside the computed one', async () => {
    const started = new Date(Date.now() - 3_600_000).toISOString();
    const e = await record({
      trace_id: 'ut-direct-1',
      model: 'ut-direct',
      started_at: started,
      tokens_in: 10_000,
      tokens_out: 2_000,
      tokens_cached_in: 1_000,
      tokens_cache_write_in: 3_000,
      tokens_reasoning: 500,
      usage_details: { cache_write_1h: 1_000, input_audio: 2_000, output_image: 100, web_search: 2 },
    });
    expect(e.usage_details).toEqual({
      cache_write_1h: 1_000,
      input_audio: 2_000,
      input_image: 0,
      output_audio: 0,
      output_image: 100,
      web_search: 2,
    });
    const q = Object.fromEntries(e.cost_breakdown.map((l: any) => [l.usage_type, l.quantity]));
    const want = {
      input: 4_000,
      cache_read: 1_000,
      cache_write_5m: 2_000,
      cache_write_1h: 1_000,
      input_audio: 2_000,
      output: 1_400,
      reasoning: 500,
      output_image: 100,
      web_search: 2,
    };
    expect(q).toEqual(want);
    expect(fromScaled(nanos(e.cost_usd), 9)).toBe(round9(handCost(want)));
    // the same detail read back from storage
    expect((await executionOf('ut-direct-1')).cost_breakdown).toEqual(e.cost_breakdown);

    const batch = await record({
      trace_id: 'ut-direct-2',
      model: 'ut-direct',
      started_at: started,
      tokens_in: 1_000_000,
      tokens_out: 1_000_000,
      service_tier: 'Batch',
    });
    expect(batch.pricing_context).toEqual({ service_tier: 'batch', region: null, batch: true });
    expect(batch.cost_breakdown.map((l: any) => [l.usage_type, l.rate, l.rule])).toEqual([
      ['input', '0.5', 'condition service_tier=batch'],
      ['output', '1', 'condition service_tier=batch'],
    ]);
    expect(batch.cost_usd).toBe(1.5);

    const caller = await record({
      trace_id: 'ut-direct-3',
      model: 'ut-direct',
      started_at: started,
      tokens_in: 100_000,
      tokens_out: 0,
      cost_usd: 0.75,
    });
    expect(caller.cost_breakdown).toEqual([
      {
        usage_type: 'provided',
        quantity: 1,
        unit: 'calls',
        rate: null,
        cost_usd: '0.75',
        source: 'caller',
        price_id: null,
        rule: 'cost stated by the caller',
        calls: 1,
        counted: true,
      },
      expect.objectContaining({ usage_type: 'input', cost_usd: '0.1', source: 'project', counted: false }),
    ]);
    expect(caller.cost_usd).toBe(0.75);
  });

  it('a tier crossing its boundary: 199,999 input tokens at the base rates, 200,001 at the tier', async () => {
    const started = new Date(Date.now() - 3_600_000).toISOString();
    const below = await record({
      trace_id: 'ut-tier-1',
      model: 'ut-tier',
      started_at: started,
      tokens_in: 199_999,
      tokens_out: 1_000,
      tokens_cached_in: 99_999,
    });
    const above = await record({
      trace_id: 'ut-tier-2',
      model: 'ut-tier',
      started_at: started,
      tokens_in: 200_001,
      tokens_out: 1_000,
      tokens_cached_in: 100_001,
    });
    // (100,000 × 1 + 99,999 × 0.1 + 1,000 × 2) / 1e6
    expect(fromScaled(nanos(below.cost_usd), 9)).toBe('0.1119999');
    expect(below.cost_breakdown[0].rule).toBe('base rates');
    // (100,000 × 2 + 100,001 × 0.2 + 1,000 × 4) / 1e6
    expect(fromScaled(nanos(above.cost_usd), 9)).toBe('0.2240002');
    expect(above.cost_breakdown.map((l: any) => [l.usage_type, l.rate, l.rule])).toEqual([
      ['input', '2', 'tier above 200000 input tokens'],
      ['cache_read', '0.2', 'tier above 200000 input tokens'],
      ['output', '4', 'tier above 200000 input tokens'],
    ]);
  });

  it('repricing with tiers: historic direct and OTLP executions change by exactly the dry run delta', async () => {
    const t0 = Date.now() - 2 * 3_600_000;
    const started = new Date(t0).toISOString();
    await record({ trace_id: 'ut-rp-1', model: 'rp-long', started_at: started, tokens_in: 150_000, tokens_out: 1_000 });
    await record({
      trace_id: 'ut-rp-2',
      model: 'rp-long',
      started_at: started,
      tokens_in: 300_000,
      tokens_out: 1_000,
      tokens_cached_in: 100_000,
    });
    const traceId = hex(32);
    const r = await getJson(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        spans: [
          {
            trace_id: traceId,
            span_id: hex(16),
            span_name: 'chat rp-long',
            span_kind: 'CLIENT',
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': 'openai',
              'gen_ai.request.model': 'rp-long',
              'gen_ai.usage.input_tokens': 250_000,
              'gen_ai.usage.output_tokens': 2_000,
            },
            start_time_ns: ns(t0),
            end_time_ns: ns(t0 + 100),
            status_code: 'OK',
          },
        ],
      }),
    });
    expect(r.status).toBe(200);
    const otlp = await executionOf(traceId);
    expect(otlp.cost_source).toBe('unpriced');

    // A base price only: 1 in, 2 out.
    expect((await call('PUT', '/models/rp-long', { input_per_mtok: 1, output_per_mtok: 2 })).status).toBe(200);
    const window = { from: new Date(t0 - 60_000).toISOString(), to: new Date(t0 + 60_000).toISOString(), model: 'rp-long' };
    const job = async () => {
      const started = await call('POST', '/reprice', window);
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      return until(async () => {
        const j = (await call('GET', `/reprice/${started.body.id}`)).body;
        return j.status === 'done' || j.status === 'failed' ? j : undefined;
      }, 'the repricing job');
    };
    const first = await job();
    expect(first.status).toBe('done');
    // 150,000 + 2,000 = 0.152; 300,000 + 2,000 = 0.302; 250,000 + 4,000 = 0.254
    expect((await executionOf('ut-rp-2')).cost_usd).toBe(0.302);
    await executionOf(traceId, (e) => e.cost_usd === 0.254);

    // A long-context tier above 200,000 input tokens: 2 in, 0.5 cached, 3 out.
    expect(
      (
        await call('PUT', '/models/rp-long', {
          input_per_mtok: 1,
          output_per_mtok: 2,
          tiers: [{ above_input_tokens: 200_000, input_per_mtok: 2, cached_input_per_mtok: 0.5, output_per_mtok: 3 }],
        })
      ).status,
    ).toBe(200);
    const dry = await call('POST', '/reprice', { ...window, dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    // ut-rp-1's cost unchanged (150,000 ≤ 200,000), but the PUT made a new price (price_id): it counts as changed, by 0;
    // ut-rp-2: (200,000 × 2 + 100,000 × 0.5 + 1,000 × 3) / 1e6 = 0.453 (+0.151);
    // the trace: (250,000 × 2 + 2,000 × 3) / 1e6 = 0.506 (+0.252)
    expect(dry.body).toMatchObject({
      executions_scanned: 3,
      executions_changed: 3,
      spend_before_usd: '0.708',
      spend_delta_usd: '0.403',
      spend_after_usd: '1.111',
    });
    const spendOf = async () =>
      nanos((await call('GET', `/spend?start=${window.from}&end=${window.to}&group_by=model&model=rp-long`)).body.total.cost_usd);
    const spendBefore = await spendOf();
    expect(fromScaled(spendBefore, 9)).toBe('0.708');
    const second = await job();
    expect(second).toMatchObject({ status: 'done', executions_changed: 3, spend_delta_usd: '0.403' });
    const rp2 = await executionOf('ut-rp-2');
    expect(rp2.cost_usd).toBe(0.453);
    expect(rp2.cost_breakdown.map((l: any) => [l.usage_type, l.quantity, l.rate, l.cost_usd, l.rule])).toEqual([
      ['input', 200_000, '2', '0.4', 'tier above 200000 input tokens'],
      ['cache_read', 100_000, '0.5', '0.05', 'tier above 200000 input tokens'],
      ['output', 1_000, '3', '0.003', 'tier above 200000 input tokens'],
    ]);
    expect((await executionOf('ut-rp-1')).cost_usd).toBe(0.152);
    const trace = await executionOf(traceId, (e) => e.cost_usd === 0.506);
    expect(trace.cost_breakdown[0]).toMatchObject({ usage_type: 'input', rate: '2', rule: 'tier above 200000 input tokens' });
    await until(async () => {
      const after = await spendOf();
      return after - spendBefore === nanos('0.403') ? true : undefined;
    }, 'spend moved by exactly the delta');
    const again = await call('POST', '/reprice', { ...window, dry_run: true });
    expect(again.body).toMatchObject({ executions_changed: 0, spend_delta_usd: '0' });
  });
});
