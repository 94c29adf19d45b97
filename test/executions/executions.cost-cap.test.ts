// A direct record whose usage at the dearest price allowed passes what an execution holds
// (Decimal(18, 9): $999,999,999.999999999) is capped there, with a warning, as traced executions
// are; it is stored, never refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const call = (method: string, path: string, body: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe(`direct records beyond the cost an execution holds (${mode} mode)`, () => {
  it('1e12 tokens in and out at $1e6 per Mtok: capped at $999,999,999.999999999, and said', async () => {
    expect((await call('PUT', '/models/dear-model', { input_per_mtok: 1_000_000, output_per_mtok: 1_000_000 })).status).toBe(200);
    const dear = await call('POST', '/executions', { trace_id: 'dear-1', model: 'dear-model', tokens_in: 1e12, tokens_out: 1e12 });
    expect(dear.status, JSON.stringify(dear.body)).toBe(201);
    // As a JSON number the cap reads 1e9 (a double); the stored decimal below is exact.
    expect(dear.body).toMatchObject({ cost_usd: 1e9, cost_source: 'computed', cost_computed_usd: 1e9 });
    expect(dear.body.usage_warnings).toEqual([
      'cost_usd exceeds 999999999.999999999 USD; capped',
      'cost_computed_usd exceeds 999999999.999999999 USD; capped',
    ]);
    const [row] = await svc.stores.clickhouse.query<{ cost: string }>(
      "SELECT toString(cost_usd) AS cost FROM executions FINAL WHERE project_id = 'default' AND trace_id = 'dear-1'",
    );
    expect(row!.cost).toBe('999999999.999999999');
  });
});
