// The `environment` spend dimension: direct records carry it as a field, OTLP traces as the
// resource attribute `deployment.environment.name`; the execution shows it, and spend breakdowns
// group and filter by it (read from the executions rows: no rollup holds it), to the nano-dollar.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, jsonCaller, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

let svc: TestService;
const P = '/api/projects/default'; // AUTH_REQUIRED=false: the dev principal administers `default`
const json = jsonCaller(() => `${svc.url}${P}`);
const WINDOW = 'start=2026-10-01T00:00:00Z&end=2026-10-08T00:00:00Z';
const spend = async (q: string) => {
  const r = await json('GET', `/spend?${WINDOW}&${q}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const costs = (rows: Array<{ environment?: string; agent?: string; cost_usd: string; executions: number }>) =>
  rows.map((r) => [r.environment, ...(r.agent === undefined ? [] : [r.agent]), r.cost_usd, r.executions]);

async function record(traceId: string, cost: number, environment?: string) {
  const r = await json('POST', '/executions', {
    trace_id: traceId,
    agent_id: 'a1',
    provider: 'openai',
    model: 'gpt-x',
    cost_usd: cost,
    started_at: '2026-10-02T10:00:00Z',
    ...(environment === undefined ? {} : { environment }),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/** One OTLP/JSON trace (an agent root and a chat call with a stated cost) from a service deployed in `environment`. */
async function otlpTrace(traceId: string, cost: number, environment: string) {
  const start = BigInt(Date.parse('2026-10-02T11:00:00Z')) * 1_000_000n;
  const attr = (key: string, v: string | number) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : { doubleValue: v },
  });
  const body = {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', 'billing'), attr('deployment.environment.name', environment)] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: [
              {
                traceId,
                spanId: '00000000000000a1',
                name: 'invoke_agent planner',
                startTimeUnixNano: String(start),
                endTimeUnixNano: String(start + 2_000_000_000n),
                attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'planner')],
              },
              {
                traceId,
                spanId: '00000000000000a2',
                parentSpanId: '00000000000000a1',
                name: 'chat m1',
                startTimeUnixNano: String(start + 1_000_000n),
                endTimeUnixNano: String(start + 1_000_000_000n),
                attributes: [
                  attr('gen_ai.operation.name', 'chat'),
                  attr('gen_ai.provider.name', 'openai'),
                  attr('gen_ai.request.model', 'm1'),
                  attr('gen_ai.usage.cost', cost),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
  const r = await getJson(`${svc.url}/api/v1/traces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

const OTLP_TRACE = '0af7651916cd43dd8448eb211c80319c';

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  await record('d-prod', 0.25, 'production');
  await record('d-stag', 0.5, 'staging');
  await record('d-none', 0.125);
  await otlpTrace(OTLP_TRACE, 1.5, 'production');
  await until(async () => (await json('GET', `/executions/${OTLP_TRACE}`)).status === 200, 'the OTLP trace assembled');
  await svc.domain.flush();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`the environment dimension (${mode} mode)`, () => {
  it('an execution shows its environment: the direct record field, the OTLP resource attribute', async () => {
    expect((await json('GET', '/executions/d-prod')).body.environment).toBe('production');
    expect((await json('GET', '/executions/d-none')).body.environment).toBeNull();
    expect((await json('GET', `/executions/${OTLP_TRACE}`)).body).toMatchObject({ environment: 'production', cost_usd: 1.5 });
  });

  it('breakdowns group by environment, from the rollup by grain', async () => {
    const b = await spend('group_by=environment');
    expect(b.source).toBe('rollup');
    expect(costs(b.rows)).toEqual([
      ['production', '1.75', 2],
      ['staging', '0.5', 1],
      ['', '0.125', 1],
    ]);
    expect(b.total).toMatchObject({ cost_usd: '2.375', executions: 4 });
    const withAgent = await spend('group_by=environment,agent');
    expect(costs(withAgent.rows)).toEqual([
      ['production', 'planner', '1.5', 1],
      ['staging', 'a1', '0.5', 1],
      ['production', 'a1', '0.25', 1],
      ['', 'a1', '0.125', 1],
    ]);
  });

  it('breakdowns filter by environment (any of several, comma-separated or repeated)', async () => {
    expect((await spend('environment=staging')).total).toMatchObject({ cost_usd: '0.5', executions: 1 });
    const two = await spend('group_by=agent&environment=production,staging');
    expect(two.source).toBe('rollup');
    expect(two.rows.map((r: { agent: string; cost_usd: string }) => [r.agent, r.cost_usd])).toEqual([
      ['planner', '1.5'],
      ['a1', '0.75'],
    ]);
    expect((await spend('environment=production&environment=nowhere')).total).toMatchObject({ cost_usd: '1.75', executions: 2 });
    // Without the dimension, the rollup still answers.
    expect((await spend('group_by=agent')).source).toBe('rollup');
  });

  it('an unknown dimension names environment among the known ones', async () => {
    const r = await json('GET', `/spend?${WINDOW}&group_by=colour`);
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/known: .*environment/);
  });
});
