// Money that cannot overflow (docs/spend.md, "Money range"): a project whose month passes $1e11
// (121 direct records priced at $999,999,999.5 each, just under the per-execution cap) gets its
// project budget and a scoped budget evaluated, its alerts stored and its figures reported, to the
// nano-dollar. numeric(20, 9) stopped at $99,999,999,999.999999999: every evaluation failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
const P = '/api/projects/default'; // AUTH_REQUIRED=false: the dev principal administers `default`
const NOV = new Date('2026-11-15T12:00:00.000Z');
const EXECUTIONS = 121;
// $1 per input token, $0.5 per output token: 999,999,999 in + 1 out = $999,999,999.5 an execution.
const TOTAL = '120999999939.5'; // 121 × 999,999,999.5: above 1e11, and exact as a JSON number too
const TOTAL_NUMERIC = '120999999939.500000000';

const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  svc = await startTestService({ BUDGET_EVAL_DEBOUNCE_MS: '10' });
  svc.domain.spend.clock.now = () => NOV;
  const price = await call('PUT', '/models/huge-llm', { provider: 'acme', input_per_mtok: 1_000_000, output_per_mtok: 500_000 });
  expect(price.status, JSON.stringify(price.body)).toBe(200);
  for (let i = 0; i < EXECUTIONS; i += 11) {
    await Promise.all(
      Array.from({ length: 11 }, async (_, j) => {
        const r = await call('POST', '/executions', {
          trace_id: `huge-${i + j}`,
          provider: 'acme',
          model: 'huge-llm',
          agent_id: 'spender',
          tokens_in: 999_999_999,
          tokens_out: 1,
          started_at: '2026-11-10T09:00:00Z',
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body.cost_usd).toBe(999_999_999.5);
      }),
    );
  }
  await svc.domain.flush();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`budgets above $1e11 a period (${mode} mode)`, () => {
  it('the project budget is evaluated, its alerts stored and reported exactly', async () => {
    const put = await call('PUT', '/budget', { budget_monthly_usd: 1_000_000_000, alert_threshold_pct: 80, enforcement_mode: 'block' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const r = await svc.domain.spend.budgets.evaluate('default');
    expect(r.state).toMatchObject({ month: '2026-11', spentNanos: `${TOTAL.replace('.', '')}00000000`, status: 'exceeded' });

    const b = (await call('GET', '/budget')).body;
    expect(b).toMatchObject({ spent_usd: Number(TOTAL), remaining_usd: 0, pct_used: 12100, status: 'exceeded', blocked: true });
    expect(b.alerts.map((a: { kind: string }) => a.kind).sort()).toEqual(['exceeded', 'threshold']);
    for (const a of b.alerts) expect(a).toMatchObject({ spent_usd: Number(TOTAL), budget_monthly_usd: 1e9, pct: 12100 });
    const stored = await svc.stores.postgres.query<{ kind: string; spent: string; pct: string }>(
      `SELECT kind, spent_usd::text AS spent, pct::text AS pct FROM budget_alerts WHERE project_id = $1 ORDER BY kind`,
      ['default'],
    );
    expect(stored).toEqual([
      { kind: 'exceeded', spent: TOTAL_NUMERIC, pct: '12100' },
      { kind: 'threshold', spent: TOTAL_NUMERIC, pct: '12100' },
    ]);
    const check = (await call('GET', '/budget/check')).body;
    expect(check).toMatchObject({ allowed: false, status: 'exceeded', remaining_usd: 0 });
  });

  it('a scoped budget (an agent, per day) is evaluated, its thresholds stored and reported exactly', async () => {
    const created = await call('POST', '/budgets', {
      scope: { kind: 'agent', value: 'spender' },
      period: 'day',
      amount_usd: 0.000000001, // the smallest amount: the largest percentage
      thresholds_pct: [100, 1000],
      enforcement_mode: 'block',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ spent_usd: 0, status: 'ok' }); // 2026-11-15 (the clock): nothing spent that day
    const id = created.body.id as string;

    // The day of the executions: the state published for checks and the alerts carry the whole sum.
    svc.domain.spend.clock.now = () => new Date('2026-11-10T12:00:00.000Z');
    try {
      const state = await svc.domain.spend.scopedBudgets.evaluate('default');
      expect(state.budgets.find((x) => x.id === id)).toMatchObject({ spentNanos: `${TOTAL.replace('.', '')}00000000`, amountNanos: '1' });
      const b = (await call('GET', `/budgets/${id}`)).body;
      expect(b).toMatchObject({ spent_usd: Number(TOTAL), remaining_usd: 0, status: 'exceeded', blocked: true });
      expect(b.pct_used).toBe(12_099_999_993_950_000_000_000); // 1.209999999395e22 %
      expect(b.alerts.map((a: { threshold_pct: number }) => a.threshold_pct).sort((x: number, y: number) => x - y)).toEqual([100, 1000]);
      const stored = await svc.stores.postgres.query<{ spent: string; pct: string }>(
        'SELECT spent_usd::text AS spent, pct::text AS pct FROM scoped_budget_alerts WHERE budget_id = $1',
        [id],
      );
      expect(stored).toEqual([
        { spent: TOTAL_NUMERIC, pct: '12099999993950000000000' },
        { spent: TOTAL_NUMERIC, pct: '12099999993950000000000' },
      ]);
      const check = (await call('GET', '/budget/check?agent_id=spender')).body;
      expect(check.budgets).toEqual([expect.objectContaining({ id, allowed: false, status: 'exceeded', remaining_usd: 0 })]);
    } finally {
      svc.domain.spend.clock.now = () => NOV;
    }
  });
});
