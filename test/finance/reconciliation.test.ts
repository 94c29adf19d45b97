// Reconciliation (GET …/reconciliation?month=): an imported invoice that matches our spend to the
// nano-dollar (snapshots on the invoice, aliases in our traces), and one that differs by known
// executions — an unpriced model, a call without usage, a failed call, an invoice line no execution
// was traced for, our spend no invoice bills — each difference explained; the monthly report as CSV
// and Parquet (read back by the engine); the provider filter; tenant isolation.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, tempDir } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
const P = '/api/projects/default';
const scratch = tempDir('traceloom-reconcile-');

async function exec(body: Record<string, unknown>) {
  const r = await getJson(`${svc.url}${P}/executions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

const importInvoice = async (body: string, type: string, query = '') => {
  const r = await getJson(`${svc.url}${P}/invoices${query}`, { method: 'POST', headers: { 'Content-Type': type }, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
};

const reconcile = (query: string) => getJson(`${svc.url}${P}/reconciliation?${query}`);

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  // September: OpenAI, traced under aliases; the invoice bills snapshots, line by line.
  await exec({
    trace_id: 's1',
    provider: 'openai',
    model: 'gpt-4o',
    cost_usd: 0.000000001,
    tokens_in: 1,
    tokens_out: 1,
    started_at: '2026-09-01T00:00:00Z',
  });
  await exec({
    trace_id: 's2',
    provider: 'openai',
    model: 'gpt-4o-2024-08-06',
    cost_usd: 1.234567891,
    tokens_in: 9,
    tokens_out: 9,
    started_at: '2026-09-01T23:59:59.999Z',
  });
  await exec({
    trace_id: 's3',
    provider: 'openai',
    model: 'gpt-4o-mini',
    cost_usd: 0.333333333,
    tokens_in: 5,
    tokens_out: 5,
    started_at: '2026-09-02T12:00:00Z',
  });
  // October: acme, billed by a generic CSV that differs by known executions.
  await exec({
    trace_id: 'o-priced',
    provider: 'acme',
    model: 'acme-lm',
    cost_usd: 0.3,
    tokens_in: 100,
    tokens_out: 10,
    started_at: '2026-10-01T08:00:00Z',
  });
  await exec({
    trace_id: 'o-unpriced',
    provider: 'acme',
    model: 'acme-lm',
    tokens_in: 100,
    tokens_out: 50,
    started_at: '2026-10-01T09:00:00Z',
  });
  await exec({ trace_id: 'o-no-usage', provider: 'acme', model: 'acme-lm', cost_usd: 0, started_at: '2026-10-02T09:00:00Z' });
  await exec({
    trace_id: 'o-failed',
    provider: 'acme',
    model: 'acme-lm',
    cost_usd: 0.000000003,
    tokens_in: 10,
    status: 'error',
    started_at: '2026-10-02T10:00:00Z',
  });
  await exec({
    trace_id: 'o-not-invoiced',
    provider: 'acme',
    model: 'acme-lm',
    cost_usd: 0.01,
    tokens_in: 1,
    tokens_out: 1,
    started_at: '2026-10-04T10:00:00Z',
  });
  // Another provider's spend that month (outside provider=acme).
  await exec({
    trace_id: 'o-openai',
    provider: 'openai',
    model: 'gpt-4o',
    cost_usd: 0.02,
    tokens_in: 1,
    tokens_out: 1,
    started_at: '2026-10-01T10:00:00Z',
  });
});

afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

describe(`reconciliation (${mode} mode)`, () => {
  it('an OpenAI invoice that matches to the nano-dollar: every row matched, totals equal, difference 0', async () => {
    // 1.234567892 on 09-01 as input + output lines; 0.333333333 on 09-02.
    await importInvoice(
      JSON.stringify({
        object: 'page',
        data: [
          {
            object: 'bucket',
            start_time: Date.UTC(2026, 8, 1) / 1000,
            end_time: Date.UTC(2026, 8, 2) / 1000,
            results: [
              {
                object: 'organization.costs.result',
                amount: { value: 1.000000001, currency: 'usd' },
                line_item: 'gpt-4o-2024-08-06, input',
              },
              {
                object: 'organization.costs.result',
                amount: { value: 0.234567891, currency: 'usd' },
                line_item: 'gpt-4o-2024-08-06, output',
              },
            ],
          },
          {
            object: 'bucket',
            start_time: Date.UTC(2026, 8, 2) / 1000,
            end_time: Date.UTC(2026, 8, 3) / 1000,
            results: [
              {
                object: 'organization.costs.result',
                amount: { value: 0.333333333, currency: 'usd' },
                line_item: 'gpt-4o-mini-2024-07-18, output',
              },
            ],
          },
        ],
        has_more: false,
        next_page: null,
      }),
      'application/json',
    );
    const r = await reconcile('month=2026-09');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.totals).toEqual({
      invoice_usd: '1.567901225',
      ours_usd: '1.567901225',
      difference_usd: '0',
      rows: 2,
      matched: 2,
      explained: 0,
      not_traced: 0,
      not_invoiced: 0,
      unexplained: 0,
    });
    expect(r.body.rows.map((x: any) => [x.day, x.model, x.invoice_usd, x.ours_usd, x.difference_usd, x.status])).toEqual([
      ['2026-09-01', 'gpt-4o', '1.234567892', '1.234567892', '0', 'matched'],
      ['2026-09-02', 'gpt-4o-mini', '0.333333333', '0.333333333', '0', 'matched'],
    ]);
    expect(r.body.rows[0]).toMatchObject({
      invoice_models: ['gpt-4o-2024-08-06'],
      our_models: ['gpt-4o', 'gpt-4o-2024-08-06'],
      executions: 2,
    });
    // Our side is GET …/spend's month to the nano-dollar.
    const spend = await getJson(`${svc.url}${P}/spend?start=2026-09-01T00:00:00Z&end=2026-10-01T00:00:00Z`);
    expect(spend.body.total.cost_usd).toBe(r.body.totals.ours_usd);
  });

  it('an invoice that differs by known executions: each difference explained', async () => {
    const csv =
      'date,model,cost,provider\n' +
      '2026-10-01,acme-lm,0.45,acme\n' + // ours 0.3 + an unpriced call the provider charged 0.15
      '2026-10-02,acme-lm,0.070000003,acme\n' + // ours 0.000000003 (failed) + a call without usage charged 0.07
      '2026-10-03,acme-lm,0.05,acme\n'; // nothing traced that day
    await importInvoice(csv, 'text/csv');
    const r = await reconcile('month=2026-10&provider=acme');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const rows = Object.fromEntries(r.body.rows.map((x: any) => [x.day, x]));
    expect(Object.keys(rows)).toEqual(['2026-10-01', '2026-10-02', '2026-10-03', '2026-10-04']);
    expect(rows['2026-10-01']).toMatchObject({
      invoice_usd: '0.45',
      ours_usd: '0.3',
      difference_usd: '0.15',
      status: 'explained',
      executions: 2,
      explanation: {
        unpriced: { executions: 1, tokens_in: 100, tokens_out: 50, trace_ids: ['o-unpriced'] },
        missing_usage: { executions: 0, trace_ids: [] },
        failed: { executions: 0 },
        not_traced: false,
        not_invoiced: false,
      },
    });
    expect(rows['2026-10-02']).toMatchObject({
      invoice_usd: '0.070000003',
      ours_usd: '0.000000003',
      difference_usd: '0.07',
      status: 'explained',
      hint: 'a difference of $0.07: 1 execution without usage, at $0 here; 1 failed execution at $0.000000003 here',
      explanation: {
        missing_usage: { executions: 1, cost_usd: '0', trace_ids: ['o-no-usage'] },
        failed: { executions: 1, cost_usd: '0.000000003', tokens_in: 10, tokens_out: 0, trace_ids: ['o-failed'] },
        unpriced: { executions: 0 },
      },
    });
    expect(rows['2026-10-03']).toMatchObject({
      invoice_usd: '0.05',
      ours_usd: '0',
      difference_usd: '0.05',
      status: 'not_traced',
      hint: expect.stringContaining('$0.05 billed with no execution traced'),
      executions: 0,
      explanation: { not_traced: true },
    });
    expect(rows['2026-10-04']).toMatchObject({
      invoice_usd: '0',
      ours_usd: '0.01',
      difference_usd: '-0.01',
      status: 'not_invoiced',
      explanation: { not_invoiced: true },
    });
    expect(r.body.totals).toEqual({
      invoice_usd: '0.570000003',
      ours_usd: '0.310000003',
      difference_usd: '0.26',
      rows: 4,
      matched: 0,
      explained: 2,
      not_traced: 1,
      not_invoiced: 1,
      unexplained: 0,
    });
    // Without the provider filter, our openai spend of the month is there too, not invoiced.
    const all = await reconcile('month=2026-10');
    expect(all.body.totals.ours_usd).toBe('0.330000003');
    expect(all.body.rows.find((x: any) => x.model === 'gpt-4o')).toMatchObject({ status: 'not_invoiced', ours_usd: '0.02' });
  });

  it('a difference no execution explains is said so', async () => {
    await exec({
      trace_id: 'n1',
      provider: 'acme',
      model: 'acme-lm',
      cost_usd: 1,
      tokens_in: 1,
      tokens_out: 1,
      started_at: '2026-11-05T10:00:00Z',
    });
    // 11-06: ours above the invoice, with an unpriced execution: it cannot account for paying less.
    await exec({
      trace_id: 'n2',
      provider: 'acme',
      model: 'acme-lm',
      cost_usd: 1,
      tokens_in: 1,
      tokens_out: 1,
      started_at: '2026-11-06T10:00:00Z',
    });
    await exec({ trace_id: 'n3', provider: 'acme', model: 'acme-lm', tokens_in: 7, started_at: '2026-11-06T11:00:00Z' });
    // 11-07: ours above the invoice by a failed call we priced and the provider did not bill.
    await exec({
      trace_id: 'n4',
      provider: 'acme',
      model: 'acme-lm',
      cost_usd: 0.5,
      tokens_in: 1,
      tokens_out: 1,
      started_at: '2026-11-07T10:00:00Z',
    });
    await exec({
      trace_id: 'n5',
      provider: 'acme',
      model: 'acme-lm',
      cost_usd: 0.2,
      tokens_in: 1,
      status: 'error',
      started_at: '2026-11-07T11:00:00Z',
    });
    await importInvoice(
      'date,model,cost\n2026-11-05,acme-lm,1.000000001\n2026-11-06,acme-lm,0.5\n2026-11-07,acme-lm,0.5\n',
      'text/csv',
      '?provider=acme',
    );
    const r = await reconcile('month=2026-11&provider=acme');
    expect(r.body.rows.map((x: any) => [x.day, x.difference_usd, x.status])).toEqual([
      ['2026-11-05', '0.000000001', 'unexplained'],
      ['2026-11-06', '-0.5', 'unexplained'],
      ['2026-11-07', '-0.2', 'explained'],
    ]);
    expect(r.body.rows[1].explanation.unpriced).toMatchObject({ executions: 1, trace_ids: ['n3'] });
    expect(r.body.rows[2].hint).toBe('a difference of -$0.2: 1 failed execution at $0.2 here');
  });

  it('a day an invoice bills without models is reconciled whole: every model of ours beside it', async () => {
    await exec({
      trace_id: 'd1',
      provider: 'openai',
      model: 'gpt-4o',
      cost_usd: 0.1,
      tokens_in: 1,
      tokens_out: 1,
      started_at: '2026-12-01T01:00:00Z',
    });
    await exec({
      trace_id: 'd2',
      provider: 'openai',
      model: 'gpt-4o-mini',
      cost_usd: 0.2,
      tokens_in: 1,
      tokens_out: 1,
      started_at: '2026-12-01T02:00:00Z',
    });
    await exec({
      trace_id: 'd3',
      provider: 'openai',
      model: 'gpt-4o',
      cost_usd: 0.4,
      tokens_in: 1,
      tokens_out: 1,
      started_at: '2026-12-02T02:00:00Z',
    });
    // OpenAI's Costs API without group_by: one amount per day, line_item null.
    await importInvoice(
      JSON.stringify({
        object: 'page',
        data: [
          {
            object: 'bucket',
            start_time: Date.UTC(2026, 11, 1) / 1000,
            end_time: Date.UTC(2026, 11, 2) / 1000,
            results: [{ object: 'organization.costs.result', amount: { value: 0.3, currency: 'usd' }, line_item: null, project_id: null }],
          },
        ],
        has_more: false,
        next_page: null,
      }),
      'application/json',
    );
    const r = await reconcile('month=2026-12&provider=openai');
    expect(r.body.rows.map((x: any) => [x.day, x.model, x.our_models, x.invoice_usd, x.ours_usd, x.status])).toEqual([
      ['2026-12-01', '', ['gpt-4o', 'gpt-4o-mini'], '0.3', '0.3', 'matched'],
      ['2026-12-02', 'gpt-4o', ['gpt-4o'], '0', '0.4', 'not_invoiced'],
    ]);
  });

  it('the monthly report as CSV and as Parquet, read back by the engine, with a total line', async () => {
    const csv = await fetch(`${svc.url}${P}/reconciliation?month=2026-10&provider=acme&format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.headers.get('content-disposition')).toContain('reconciliation-default-2026-10.csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe(
      'row_type,month,day,model,invoice_models,our_models,invoice_usd,ours_usd,difference_usd,status,hint,executions,unpriced_executions,missing_usage_executions,failed_executions,example_trace_ids,invoice_refs',
    );
    expect(lines).toHaveLength(6);
    expect(lines[1]).toBe(
      'line,2026-10,2026-10-01,acme-lm,acme-lm,acme-lm,0.45,0.3,0.15,explained,"a difference of $0.15: 1 unpriced execution (150 tokens) priced at $0 here: add the model\'s price, then reprice",2,1,0,0,o-unpriced,line 2',
    );
    expect(lines[5]).toBe('total,2026-10,,,,,0.570000003,0.310000003,0.26,differs,,5,1,1,1,,');

    const res = await fetch(`${svc.url}${P}/reconciliation?month=2026-10&provider=acme&format=parquet`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
    expect(bytes.subarray(bytes.length - 4).toString()).toBe('PAR1');
    const file = path.join(scratch, 'report.parquet');
    fs.writeFileSync(file, bytes);
    const rows = await svc.stores.clickhouse.query<Record<string, string>>(
      `SELECT row_type, toString(day) AS day, model, toString(invoice_usd) AS invoice_usd, toString(difference_usd) AS difference_usd,
         toTypeName(ours_usd) AS money_type, toTypeName(executions) AS count_type, status, example_trace_ids
       FROM file({f:String}, 'Parquet') ORDER BY row_type, day`,
      { f: file },
    );
    expect(rows).toHaveLength(5);
    expect(rows[0]).toMatchObject({
      row_type: 'line',
      day: '2026-10-01',
      invoice_usd: '0.45',
      difference_usd: '0.15',
      status: 'explained',
    });
    expect(rows[0]!.money_type).toBe('Decimal(38, 9)');
    expect(rows[0]!.count_type).toBe('Int64');
    expect(rows[4]).toMatchObject({ row_type: 'total', invoice_usd: '0.570000003', difference_usd: '0.26' });
    const [sum] = await svc.stores.clickhouse.query<{ s: string }>(
      "SELECT toString(sum(difference_usd)) AS s FROM file({f:String}, 'Parquet') WHERE row_type = 'line'",
      { f: file },
    );
    expect(sum!.s).toBe('0.26');
  });

  it('a month is YYYY-MM; other parameters are refused', async () => {
    expect((await reconcile('month=2026-13')).status).toBe(400);
    expect((await reconcile('')).status).toBe(400);
    expect((await reconcile('month=2026-10&format=xml')).status).toBe(400);
    expect((await reconcile('month=2026-10&group_by=x')).status).toBe(400);
    const empty = await reconcile('month=1999-01');
    expect(empty.body).toMatchObject({ rows: [], totals: { invoice_usd: '0', ours_usd: '0', difference_usd: '0', rows: 0 } });
  });

  it("keeps tenants apart: another project's invoice and executions are in neither answer", async () => {
    await svc.stores.postgres.query("INSERT INTO projects (project_id, name) VALUES ('tenant-b', 'B') ON CONFLICT DO NOTHING");
    await svc.domain.executions.recorder.record(
      'tenant-b',
      { trace_id: 'b1', provider: 'acme', model: 'acme-lm', cost_usd: 7, started_at: '2026-10-01T08:00:00Z' } as never,
      '',
    );
    await svc.domain.finance.invoices.import('tenant-b', {
      kind: 'csv',
      body: Buffer.from('date,model,cost\n2026-10-01,acme-lm,7\n'),
      hints: { provider: 'acme' },
      importedBy: 'test',
    });
    const mine = await reconcile('month=2026-10&provider=acme');
    expect(mine.body.totals).toMatchObject({ invoice_usd: '0.570000003', ours_usd: '0.310000003' });
    const { monthOf } = await import('../../src/finance/month.ts');
    const theirs = await svc.domain.finance.reconciliation.reconcile('tenant-b', monthOf('2026-10'), 'acme');
    expect(theirs.totals).toMatchObject({ invoice_usd: '7', ours_usd: '7', difference_usd: '0', matched: 1, rows: 1 });
    expect((await getJson(`${svc.url}/api/projects/tenant-b/reconciliation?month=2026-10`)).status).toBe(403);
  });
});
