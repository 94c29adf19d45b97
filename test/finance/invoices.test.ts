// Invoices (POST/GET/DELETE …/invoices): OpenAI's Costs API JSON and dashboard CSV, Anthropic's
// cost report JSON (cents) and CSV, a generic CSV; amounts kept exactly (no binary float);
// idempotent by content; a day billed twice by a provider refused; bad files a 400 naming the line
// (or JSON path) and the column (or field); size and media type checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { modelKey } from '../../src/finance/model-key.ts';
import { centsToDollars, plainDecimal } from '../../src/finance/invoice-formats.ts';

let svc: TestService;
const P = '/api/projects/default';

const post = (body: string, type: string, query = '') =>
  getJson(`${svc.url}${P}/invoices${query}`, { method: 'POST', headers: { 'Content-Type': type }, body });

/** OpenAI's Costs API page (GET /v1/organization/costs?group_by=line_item), numbers as published. */
const OPENAI_PAGE = `{
  "object": "page",
  "data": [
    {"object": "bucket", "start_time": 1735689600, "end_time": 1735776000, "results": [
      {"object": "organization.costs.result", "amount": {"value": 0.123456789123, "currency": "usd"}, "line_item": "gpt-4o-2024-08-06, input", "project_id": "proj_a"},
      {"object": "organization.costs.result", "amount": {"value": 1.5e-7, "currency": "usd"}, "line_item": "gpt-4o-2024-08-06, output", "project_id": "proj_a"},
      {"object": "organization.costs.result", "amount": {"value": 2, "currency": "usd"}, "line_item": "gpt-4o-mini-2024-07-18, input", "project_id": "proj_b"}
    ]},
    {"object": "bucket", "start_time": 1735776000, "end_time": 1735862400, "results": [
      {"object": "organization.costs.result", "amount": {"value": 0.000000001, "currency": "usd"}, "line_item": "gpt-4o-2024-08-06, input", "project_id": "proj_a"}
    ]}
  ],
  "has_more": false,
  "next_page": null
}`;

/** Anthropic's cost report (GET /v1/organizations/cost_report?group_by[]=description): amounts in cents, as decimal strings. */
const ANTHROPIC_REPORT = JSON.stringify({
  data: [
    {
      starting_at: '2025-01-01T00:00:00Z',
      ending_at: '2025-01-02T00:00:00Z',
      results: [
        {
          currency: 'USD',
          amount: '123.45',
          workspace_id: null,
          description: 'Claude Sonnet 4 Usage - Input Tokens',
          cost_type: 'tokens',
          context_window: '0-200k',
          model: 'claude-sonnet-4-20250514',
          service_tier: 'standard',
          token_type: 'uncached_input_tokens',
        },
        { currency: 'USD', amount: '0.0000001', model: 'claude-sonnet-4-20250514', cost_type: 'tokens', token_type: 'output_tokens' },
        { currency: 'USD', amount: '50', model: null, cost_type: 'web_search', token_type: null },
      ],
    },
  ],
  has_more: false,
  next_page: null,
});

describe(`invoices (${mode} mode)`, () => {
  beforeAll(async () => {
    svc = await startTestService({ AUTH_REQUIRED: 'false', MAX_INVOICE_BYTES: String(64 * 1024) });
  });
  afterAll(async () => {
    await svc?.close();
    await dropTestDatabases();
  });

  it('matches models by the documented key: snapshots, prefixes and aliases meet', () => {
    expect(modelKey('gpt-4o-2024-08-06')).toBe('gpt-4o');
    expect(modelKey('GPT-4o')).toBe('gpt-4o');
    expect(modelKey('openai/gpt-4o')).toBe('gpt-4o');
    expect(modelKey('gpt-4-0613')).toBe('gpt-4');
    expect(modelKey('claude-3-5-sonnet-20241022')).toBe('claude-3-5-sonnet');
    expect(modelKey('claude-3-5-sonnet-latest')).toBe('claude-3-5-sonnet');
    expect(modelKey('claude-3-5-sonnet@20240620')).toBe('claude-3-5-sonnet');
    expect(modelKey('anthropic.claude-3-5-sonnet-20241022-v2:0')).toBe('claude-3-5-sonnet');
    expect(modelKey('ft:gpt-4o-mini-2024-07-18:org::abc')).toBe('ft:gpt-4o-mini-2024-07-18:org::abc');
    expect(modelKey('gpt-4o-mini')).not.toBe(modelKey('gpt-4o'));
    expect(plainDecimal('1.5e-7')).toBe('0.00000015');
    expect(plainDecimal('-2E+3')).toBe('-2000');
    expect(plainDecimal('abc')).toBeUndefined();
    expect(centsToDollars('123.45')).toBe('1.2345');
    expect(centsToDollars('0.0000001')).toBe('0.000000001');
    expect(centsToDollars('5')).toBe('0.05');
  });

  it('imports an OpenAI Costs API page exactly, and the same bytes again as the same invoice', async () => {
    const r = await post(OPENAI_PAGE, 'application/json', '?name=openai%20january');
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      format: 'openai',
      provider: 'openai',
      name: 'openai january',
      first_day: '2025-01-01',
      last_day: '2025-01-02',
      lines: 4,
      // 0.123456789123 + 0.00000015 + 2 + 0.000000001, rounded once: 2.123456940123 → 2.12345694
      total_usd: '2.12345694',
      skipped_lines: 0,
    });
    const again = await post(OPENAI_PAGE, 'application/json');
    expect(again.status).toBe(200);
    expect(again.body.invoice_id).toBe(r.body.invoice_id);
    const list = await getJson(`${svc.url}${P}/invoices`);
    expect(list.body.invoices.filter((i: { invoice_id: string }) => i.invoice_id === r.body.invoice_id)).toHaveLength(1);
    const lines = await svc.stores.postgres.query<{ model: string; model_key: string; cost_usd: string; raw_ref: string }>(
      'SELECT model, model_key, cost_usd::text, raw_ref FROM invoice_lines WHERE invoice_id = $1 ORDER BY line_no',
      [r.body.invoice_id],
    );
    expect(lines).toEqual([
      { model: 'gpt-4o-2024-08-06', model_key: 'gpt-4o', cost_usd: '0.123456789123', raw_ref: 'data[0].results[0]' },
      { model: 'gpt-4o-2024-08-06', model_key: 'gpt-4o', cost_usd: '0.00000015', raw_ref: 'data[0].results[1]' },
      { model: 'gpt-4o-mini-2024-07-18', model_key: 'gpt-4o-mini', cost_usd: '2', raw_ref: 'data[0].results[2]' },
      { model: 'gpt-4o-2024-08-06', model_key: 'gpt-4o', cost_usd: '0.000000001', raw_ref: 'data[1].results[0]' },
    ]);
    // The same days billed by openai again, in another file: refused, naming the invoice.
    const overlap = await post(OPENAI_PAGE.replace('0.123456789123', '0.5'), 'application/json');
    expect(overlap.status).toBe(409);
    expect(overlap.body.detail).toContain(r.body.invoice_id);
    expect(overlap.body.detail).toContain('2025-01-01');
    // Deleted, then gone.
    expect((await getJson(`${svc.url}${P}/invoices/${r.body.invoice_id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await getJson(`${svc.url}${P}/invoices/${r.body.invoice_id}`)).status).toBe(404);
    expect((await getJson(`${svc.url}${P}/invoices/not-a-uuid`)).status).toBe(404);
    expect((await svc.stores.postgres.query('SELECT 1 FROM invoice_lines WHERE invoice_id = $1', [r.body.invoice_id])).length).toBe(0);
  });

  it('keeps only one provider project when asked (provider_project)', async () => {
    const r = await post(OPENAI_PAGE, 'application/json', '?provider_project=proj_b');
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ lines: 1, total_usd: '2', skipped_lines: 3 });
    expect((await getJson(`${svc.url}${P}/invoices/${r.body.invoice_id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it("imports Anthropic's cost report: amounts in cents, exactly; costs without a model billed apart", async () => {
    const r = await post(ANTHROPIC_REPORT, 'application/json');
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    // 123.45 + 0.0000001 + 50 cents = $1.734500001
    expect(r.body).toMatchObject({ format: 'anthropic', provider: 'anthropic', lines: 3, total_usd: '1.734500001' });
    const lines = await svc.stores.postgres.query<{ model_key: string; cost_usd: string; description: string }>(
      'SELECT model_key, cost_usd::text, description FROM invoice_lines WHERE invoice_id = $1 ORDER BY line_no',
      [r.body.invoice_id],
    );
    expect(lines.map((l) => [l.model_key, l.cost_usd])).toEqual([
      ['claude-sonnet-4', '1.2345'],
      ['claude-sonnet-4', '0.000000001'],
      ['(web_search)', '0.5'],
    ]);
    expect(lines[0]!.description).toContain('uncached_input_tokens');
  });

  it("imports Anthropic's CSV (amount in cents) and OpenAI's dashboard CSV (empty days skipped)", async () => {
    const anthropic =
      'usage_date_utc,model,workspace_id,cost_type,token_type,amount,currency\r\n' +
      '2025-02-01,claude-3-5-haiku-20241022,wrk_1,tokens,output_tokens,12.5,USD\r\n' +
      '2025-02-01,claude-3-5-haiku-20241022,wrk_1,tokens,uncached_input_tokens,0.25,USD\r\n';
    const a = await post(anthropic, 'text/csv');
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(a.body).toMatchObject({ format: 'anthropic', lines: 2, total_usd: '0.1275' });
    const openai =
      'start_time,end_time,start_time_iso,end_time_iso,amount_value,amount_currency,line_item,project_id,organization_id,organization_name\n' +
      '1738368000,1738454400,2025-02-01T00:00:00+00:00,2025-02-02T00:00:00+00:00,0.8958740000000000,usd,"gpt-4o-2024-08-06, input",proj_a,org-x,Personal\n' +
      '1738454400,1738540800,2025-02-02T00:00:00+00:00,2025-02-03T00:00:00+00:00,,,,,,\n';
    const o = await post(openai, 'text/csv');
    expect(o.status, JSON.stringify(o.body)).toBe(201);
    expect(o.body).toMatchObject({ format: 'openai', lines: 1, skipped_lines: 1, total_usd: '0.895874', first_day: '2025-02-01' });
  });

  it('imports a generic CSV of date, model, cost with its provider', async () => {
    const csv = 'Date,Model,Cost USD,Provider\n2025-03-01,my-model,0.000000007,acme\n2025-03-02T10:00:00Z,my-model,"1,000"\n';
    const bad = await post(csv, 'text/csv');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/line 3, column "cost_usd": not a decimal amount/);
    // A line without a provider is billed by the provider= of the request, else by none ('').
    const r = await post(
      'Date,Model,Cost USD,Provider\n2025-03-01,my-model,0.000000007,acme\n2025-03-02T10:00:00Z,my-model,$1000\n',
      'text/csv',
      '?provider=acme',
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ format: 'generic', provider: 'acme', lines: 2, total_usd: '1000.000000007', last_day: '2025-03-02' });
  });

  it('refuses bad files with a 400 naming the line (or JSON path) and the column (or field)', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['date,model,cost\n2025-04-01,m,1\nnot-a-day,m,2\n', 'text/csv', /line 3, column "date": not a day/],
      ['date,model,cost\n2025-04-01,,1\n', 'text/csv', /line 2, column "model": empty/],
      ['date,cost\n2025-04-01,1\n', 'text/csv', /no model column/],
      ['date,model\n2025-04-01,m\n', 'text/csv', /no cost column/],
      ['date,model,cost,currency\n2025-04-01,m,1,EUR\n', 'text/csv', /line 2, column "currency": only USD/],
      ['date,model,cost\n2025-04-01,m,1,extra\n', 'text/csv', /line 2: 4 fields where the header names 3/],
      ['date,model,cost\n2025-04-01,"m,1\n', 'text/csv', /line 2: a quoted field is not closed/],
      [
        OPENAI_PAGE.replace('"value": 2,', '"value": "two",'),
        'application/json',
        /data\[0\]\.results\[2\], amount\.value: not a decimal amount/,
      ],
      [
        OPENAI_PAGE.replace('"currency": "usd"}, "line_item": "gpt-4o-mini', '"currency": "eur"}, "line_item": "gpt-4o-mini'),
        'application/json',
        /data\[0\]\.results\[2\], amount\.currency: only USD/,
      ],
      [
        OPENAI_PAGE.replace('1735776000, "end_time": 1735862400', '"soon", "end_time": 1735862400'),
        'application/json',
        /data\[1\], start_time: not a day/,
      ],
      [ANTHROPIC_REPORT.replace('"123.45"', '"12x"'), 'application/json', /data\[0\]\.results\[0\], amount: not a decimal amount/],
      ['{"data": [{"results": 3}]}', 'application/json', /data\[0\]: a time bucket has a "results" array/],
      ['{"data": ', 'application/json', /not valid JSON/],
      ['date,model,cost\n', 'text/csv', /no line with an amount/],
    ];
    for (const [body, type, detail] of cases) {
      const r = await post(body, type);
      expect(r.status, `${body.slice(0, 60)} → ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.detail).toMatch(detail);
    }
    expect((await post('x', 'application/xml')).status).toBe(415);
    const big = `date,model,cost\n${'2025-05-01,m,1\n'.repeat(5000)}`;
    const tooBig = await post(big, 'text/csv');
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.detail).toContain(String(64 * 1024));
  });

  it('keeps invoices per project: another tenant sees none of them', async () => {
    await svc.stores.postgres.query("INSERT INTO projects (project_id, name) VALUES ('tenant-b', 'B') ON CONFLICT DO NOTHING");
    const b = await svc.domain.finance.invoices.import('tenant-b', {
      kind: 'csv',
      body: Buffer.from('date,model,cost\n2025-06-01,m,5\n'),
      hints: { provider: 'acme' },
      importedBy: 'test',
    });
    expect(b.created).toBe(true);
    const mine = await getJson(`${svc.url}${P}/invoices`);
    expect(mine.body.invoices.map((i: { invoice_id: string }) => i.invoice_id)).not.toContain(b.invoice.invoice_id);
    expect((await getJson(`${svc.url}${P}/invoices/${b.invoice.invoice_id}`)).status).toBe(404);
    expect((await getJson(`${svc.url}${P}/invoices/${b.invoice.invoice_id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await getJson(`${svc.url}/api/projects/tenant-b/invoices`)).status).toBe(403);
    // The same file in another project is its own invoice there.
    const here = await post('date,model,cost\n2025-06-01,m,5\n', 'text/csv', '?provider=acme');
    expect(here.status).toBe(201);
    expect(here.body.invoice_id).not.toBe(b.invoice.invoice_id);
  });
});
