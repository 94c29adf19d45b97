// Direct execution records over HTTP: validation, pricing, idempotency (also across a restart),
// every list filter against a hand-computed expectation, keyset pages, daily spend exactness,
// and backpressure.
import { createExecutionListing } from '../../src/executions/execution-listing-repository.ts';
import { apiKeyNames } from '../../src/auth/api-key-repository.ts';
import { scoreFilterSql } from '../../src/scores/score-aggregate-repository.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
const P = '/api/projects/default';
const post = (body: unknown, url = svc.url) =>
  getJson(`${url}${P}/executions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const list = async (qs: string, url = svc.url) => getJson(`${url}${P}/executions?${qs}`);

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  await getJson(`${svc.url}${P}/prompts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt_id: 'support', type: 'text', template: 'Help with {{topic}}', labels: ['production'] }),
  });
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

async function dailySpend(project = 'default') {
  const [r] = await svc.stores.clickhouse.query<{ cost: string; n: string }>(
    "SELECT toString(sum(cost_usd)) AS cost, toString(sum(executions)) AS n FROM spend_by_dims WHERE project_id = {p:String} AND grain = 'day'",
    { p: project },
  );
  return { cost: r!.cost, executions: Number(r!.n) };
}

describe(`direct executions (${mode} mode)`, () => {
  it('records a priced execution with templates and tool calls; detail shows messages only on request', async () => {
    const body = {
      trace_id: 'exec-1',
      agent_id: 'support-bot',
      provider: 'openai',
      model: 'gpt-4o-mini',
      tokens_in: 1000,
      tokens_out: 500,
      tokens_cached_in: 200,
      latency_ms: 1200,
      started_at: '2026-11-01T10:00:00.000Z',
      tags: ['beta'],
      metadata: { region: 'eu' },
      session_id: 's-1',
      conversation_history: [
        { role: 'system', content: 'Help with billing' },
        { role: 'user', content: 'why?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"id":1}' }] },
        { role: 'tool', tool_call_id: 'call_1', name: 'lookup', content: 'ok' },
      ],
      template_usages: [
        { prompt_id: 'support', version: 'production', inputs: { topic: 'billing' }, message_index: 0, role: 'system', source: 'sdk' },
      ],
    };
    const r = await post(body);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      trace_id: 'exec-1',
      cost_usd: 0.000435, // 800 × 0.15 + 200 × 0.075 + 500 × 0.6 per Mtok
      cost_source: 'computed',
      cost_computed_usd: 0.000435,
      price_id: 'catalogue:openai/gpt-4o-mini',
      started_at: '2026-11-01T10:00:00.000Z',
      ended_at: '2026-11-01T10:00:01.200Z',
      has_templates: true,
      template_count: 1,
      source: 'api',
      tags: ['beta'],
      metadata: { region: 'eu' },
      template_usages: [
        {
          prompt_id: 'support',
          version_ref: 'production',
          version: 1,
          inputs: { topic: 'billing' },
          message_index: 0,
          role: 'system',
          source: 'sdk',
        },
      ],
    });
    expect(r.body.conversation_history).toBeUndefined();
    const detail = await getJson(`${svc.url}${P}/executions/exec-1?include_messages=true`);
    expect(detail.body.conversation_history).toEqual(body.conversation_history);
    expect((await getJson(`${svc.url}${P}/executions/nope`)).status).toBe(404);

    const timeline = await getJson(`${svc.url}${P}/executions/exec-1/timeline`);
    expect(timeline.body).toEqual({
      trace_id: 'exec-1',
      events: [
        { index: 0, type: 'message', role: 'system', content: 'Help with billing' },
        { index: 1, type: 'message', role: 'user', content: 'why?' },
        { index: 2, type: 'tool_call', call_id: 'call_1', name: 'lookup', arguments: '{"id":1}' },
        { index: 3, type: 'tool_result', call_id: 'call_1', name: 'lookup', content: 'ok', is_error: false },
      ],
    });
    const compact = await getJson(`${svc.url}${P}/executions/exec-1/timeline?compact_tools=true`);
    expect(compact.body.events).toEqual([
      { index: 0, type: 'message', role: 'system', content: 'Help with billing' },
      { index: 1, type: 'message', role: 'user', content: 'why?' },
      { index: 2, type: 'tool', call_id: 'call_1', name: 'lookup', arguments: '{"id":1}', result: 'ok', is_error: false },
    ]);
    const tree = await getJson(`${svc.url}${P}/executions/exec-1/hierarchy`);
    expect(tree.body.spans).toHaveLength(1);
    expect(tree.body.spans[0]).toMatchObject({
      parent_span_id: null,
      synthetic: true,
      start_time: '2026-11-01T10:00:00.000Z',
      end_time: '2026-11-01T10:00:01.200Z',
      start_time_ns: '1793527200000000000',
      duration_ms: 1200,
      model: 'gpt-4o-mini',
      cost_usd: 0.000435,
      children: [],
    });
    expect((await getJson(`${svc.url}${P}/executions/nope/timeline`)).status).toBe(404);
    expect((await getJson(`${svc.url}${P}/executions/exec-1/timeline?compact_tools=yes`)).status).toBe(400);
  });

  it('validates: unknown fields and bounds are 400 naming them; message_index and unknown prompts are 422', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ trace_id: 'v1', colour: 'red' }, 400, 'colour: unknown field'],
      [{}, 400, 'trace_id: is required'],
      [{ trace_id: 'has space' }, 400, 'trace_id:'],
      [{ trace_id: 'v2', tokens_in: -1 }, 400, 'tokens_in:'],
      [{ trace_id: 'v3', status: 'meh' }, 400, 'status:'],
      [{ trace_id: 'v4', started_at: 'yesterday' }, 400, 'started_at:'],
      [
        {
          trace_id: 'v5',
          conversation_history: [{ role: 'user', content: 'x' }],
          template_usages: [{ prompt_id: 'support', message_index: 1 }],
        },
        422,
        'message_index',
      ],
      [{ trace_id: 'v6', template_usages: [{ prompt_id: 'ghost' }] }, 422, 'prompt ghost does not exist'],
      [{ trace_id: 'v7', template_usages: [{ prompt_id: 'support', version: 9 }] }, 422, 'version 9 of prompt support does not exist'],
      [{ trace_id: 'v8', started_at: '2026-11-01T10:00:00Z', ended_at: '2026-11-01T09:00:00Z' }, 422, 'ended_at'],
    ];
    for (const [body, status, detail] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.detail).toContain(detail);
    }
    expect((await list('')).body.items.map((i: { trace_id: string }) => i.trace_id)).not.toContain('v5');
  });

  it('prices: provided cost kept beside the computed one; unknown model unpriced at 0; impossible counts flagged', async () => {
    const provided = await post({
      trace_id: 'price-1',
      provider: 'openai',
      model: 'gpt-4o-mini',
      tokens_in: 1000,
      tokens_out: 0,
      cost_usd: 0.01,
    });
    expect(provided.body).toMatchObject({ cost_usd: 0.01, cost_source: 'provided', cost_computed_usd: 0.00015 });
    const unknown = await post({ trace_id: 'price-2', provider: 'acme', model: 'acme-9000', tokens_in: 5000, tokens_out: 5000 });
    expect(unknown.body).toMatchObject({ cost_usd: 0, cost_source: 'unpriced', cost_computed_usd: null, price_id: null });
    const odd = await post({ trace_id: 'price-3', provider: 'openai', model: 'gpt-4o-mini', tokens_in: 100, tokens_cached_in: 150 });
    expect(odd.body.usage_warnings[0]).toMatch(/exceed tokens_in/);
    expect(odd.body.tokens_cached_in).toBe(150);
  });

  it('is idempotent: same content 200 with the stored execution, other content 409, also after a restart', async () => {
    const body = { trace_id: 'idem-1', model: 'gpt-4o-mini', provider: 'openai', tokens_in: 10, tokens_out: 10, latency_ms: 5 };
    const first = await post(body);
    expect(first.status).toBe(201);
    const again = await Promise.all([post(body), post(body), post(body)]);
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(again[0]!.body).toEqual(first.body);
    const clash = await post({ ...body, tokens_out: 11 });
    expect(clash.status).toBe(409);
    expect(clash.body).toEqual({ detail: 'trace_id idem-1 already recorded with different content' });

    await svc.close();
    svc = await startTestService({}, { env: svc.testEnv });
    expect((await post(body)).status).toBe(200);
    expect((await post({ ...body, tokens_in: 1 })).status).toBe(409);
    const listed = (await list('limit=1000')).body.items.filter((i: { trace_id: string }) => i.trace_id === 'idem-1');
    expect(listed).toHaveLength(1);
  });

  it('concurrent first writes of one trace record it once', async () => {
    const body = { trace_id: 'race-1', cost_usd: 1 };
    const rs = await Promise.all(Array.from({ length: 8 }, () => post(body)));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 200)).toHaveLength(7);
  });
});

describe(`listing (${mode} mode)`, () => {
  type Rec = {
    trace_id: string;
    provider: string;
    model: string;
    agent_id: string;
    cost_usd: number;
    started_at: string;
    status: 'ok' | 'error';
    prompt?: boolean;
  };
  const records: Rec[] = [];
  const providers = ['openai', 'anthropic', 'google'];
  const models = ['m-a', 'm-b', 'm-c', 'm-d'];
  const agents = ['alpha', 'beta'];

  it('every filter and their combinations match a hand-computed expectation; cursor pages cover the set once', async () => {
    // Records go into "default", the dev principal's project, beside those of the tests above.
    for (let i = 0; i < 36; i++) {
      const r: Rec = {
        trace_id: `L-${String(i).padStart(2, '0')}`,
        provider: providers[i % 3]!,
        model: models[i % 4]!,
        agent_id: agents[i % 2]!,
        cost_usd: Number(((i % 7) * 0.0011).toFixed(4)),
        started_at: new Date(Date.UTC(2026, 9, 1 + (i % 9), i % 24, i)).toISOString(),
        status: i % 5 === 0 ? 'error' : 'ok',
        prompt: i % 4 === 0,
      };
      records.push(r);
      const res = await post({
        trace_id: r.trace_id,
        provider: r.provider,
        model: r.model,
        agent_id: r.agent_id,
        cost_usd: r.cost_usd,
        started_at: r.started_at,
        status: r.status,
        tags: ['list-test'],
        ...(r.prompt ? { template_usages: [{ prompt_id: 'support', inputs: { topic: 'x' } }] } : {}),
      });
      expect(res.status).toBe(201);
    }
    const window = 'start=2026-10-01T00:00:00Z&end=2026-10-31T00:00:00Z';
    const inWindow = (r: Rec) => r.started_at >= '2026-10-01T00:00:00.000Z' && r.started_at < '2026-10-31T00:00:00.000Z';
    const order = (a: Rec, b: Rec) =>
      a.started_at === b.started_at ? (a.trace_id < b.trace_id ? 1 : -1) : a.started_at < b.started_at ? 1 : -1;
    const checks: Array<[string, (r: Rec) => boolean]> = [
      ['', () => true],
      ['provider=openai', (r) => r.provider === 'openai'],
      ['provider=openai,google', (r) => r.provider !== 'anthropic'],
      ['provider=openai&provider=google', (r) => r.provider !== 'anthropic'],
      ['model=m-a&agent_id=beta', (r) => r.model === 'm-a' && r.agent_id === 'beta'],
      ['agent_id=alpha&status=error', (r) => r.agent_id === 'alpha' && r.status === 'error'],
      ['has_templates=true', (r) => !!r.prompt],
      ['has_templates=false', (r) => !r.prompt],
      ['prompt_id=support', (r) => !!r.prompt],
      ['min_cost=0.0033', (r) => r.cost_usd >= 0.0033],
      ['max_cost=0.0022', (r) => r.cost_usd <= 0.0022],
      [
        'min_cost=0.0011&max_cost=0.0044&provider=anthropic',
        (r) => r.cost_usd >= 0.0011 && r.cost_usd <= 0.0044 && r.provider === 'anthropic',
      ],
      [
        'start=2026-10-03T00:00:00Z&end=2026-10-06T00:00:00Z',
        (r) => r.started_at >= '2026-10-03T00:00:00.000Z' && r.started_at < '2026-10-06T00:00:00.000Z',
      ],
      [
        `start=${Date.UTC(2026, 9, 5)}&end=${Date.UTC(2026, 9, 31)}&status=ok&has_templates=true`,
        (r) => inWindow(r) && r.started_at >= '2026-10-05T00:00:00.000Z' && r.status === 'ok' && !!r.prompt,
      ],
    ];
    for (const [qs, pred] of checks) {
      // The test window keeps the other tests' executions out, unless the check sets its own.
      const own = /(^|&)(start|end)=/.test(qs);
      const expected = records
        .filter((r) => (own || inWindow(r)) && pred(r))
        .sort(order)
        .map((r) => r.trace_id);
      const got = await list(`${own ? '' : `${window}&`}limit=1000&${qs}`);
      expect(got.status, qs).toBe(200);
      expect(
        got.body.items.map((i: { trace_id: string }) => i.trace_id),
        qs,
      ).toEqual(expected);
      expect(got.body.total, qs).toBe(expected.length);
    }

    // keyset pages: every record once, in order
    const expectedAll = records
      .filter(inWindow)
      .sort(order)
      .map((r) => r.trace_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(`${window}&limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(expectedAll.length);
      seen.push(...page.body.items.map((i: { trace_id: string }) => i.trace_id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(seen).toEqual(expectedAll);
    // offset pages agree
    const p2 = await list(`${window}&limit=5&offset=5`);
    expect(p2.body.items.map((i: { trace_id: string }) => i.trace_id)).toEqual(expectedAll.slice(5, 10));
  });

  it('a correction (cancel row + new version, as span assembly writes) shows once, with the new figures, in list, total and daily spend', async () => {
    expect((await post({ trace_id: 'corr-1', cost_usd: 1, started_at: '2026-08-01T00:00:00Z', model: 'm-old' })).status).toBe(201);
    const ch = svc.stores.clickhouse;
    const [orig] = await ch.query<Record<string, unknown>>("SELECT * FROM executions WHERE project_id = 'default' AND trace_id = 'corr-1'");
    await ch.insert('executions', [{ ...orig, sign: -1 }]); // cancels version 1
    await ch.insert('executions', [{ ...orig, version: 2, cost_usd: '2.5', model: 'm-new' }]);
    const window = 'start=2026-08-01T00:00:00Z&end=2026-08-02T00:00:00Z';
    for (const limit of [1, 50]) {
      const r = await list(`${window}&limit=${limit}`);
      expect(r.body.items.map((i: { trace_id: string; cost_usd: number; model: string }) => [i.trace_id, i.cost_usd, i.model])).toEqual([
        ['corr-1', 2.5, 'm-new'],
      ]);
      expect(r.body.total).toBe(1);
    }
    expect((await list(`${window}&model=m-old`)).body).toMatchObject({ items: [], total: 0 });
    const [d] = await ch.query<{ cost: string; n: string }>(
      "SELECT toString(sum(cost_usd)) AS cost, toString(sum(executions)) AS n FROM spend_by_dims WHERE project_id = 'default' AND grain = 'day' AND bucket = '2026-08-01 00:00:00'",
    );
    expect(d).toEqual({ cost: '2.5', n: '1' });
    expect((await getJson(`${svc.url}${P}/executions/corr-1`)).body).toMatchObject({ cost_usd: 2.5, model: 'm-new' });
  });

  it('each item names the API key that sent it (one lookup per page); null without a key or once the key is gone', async () => {
    const keyOf = async (name: string) => {
      const r = await getJson(`${svc.url}${P}/api-keys`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      expect(r.status).toBe(201);
      return { id: r.body.key_id as string, secret: r.body.key as string };
    };
    const [billing, search] = [await keyOf('billing-worker'), await keyOf('search-worker')];
    const sent: Array<[string, string | undefined, number]> = [
      ['key-a1', billing.secret, 0.003],
      ['key-b1', search.secret, 0.001],
      ['key-a2', billing.secret, 0.002],
      ['key-none', undefined, 0.004],
    ];
    for (const [i, [traceId, secret, cost]] of sent.entries()) {
      const r = await getJson(`${svc.url}${P}/executions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(secret ? { 'X-API-Key': secret } : {}) },
        body: JSON.stringify({
          trace_id: traceId,
          provider: 'openai',
          model: 'm-a',
          cost_usd: cost,
          started_at: `2026-07-20T10:0${i}:00Z`,
        }),
      });
      expect(r.status).toBe(201);
    }
    const window = 'start=2026-07-20T00:00:00Z&end=2026-07-21T00:00:00Z';
    const keys = (items: Array<{ trace_id: string; api_key_id: string | null; api_key_name: string | null }>) =>
      items.map((i) => [i.trace_id, i.api_key_id, i.api_key_name]);
    const byTime = [
      ['key-none', null, null],
      ['key-a2', billing.id, 'billing-worker'],
      ['key-b1', search.id, 'search-worker'],
      ['key-a1', billing.id, 'billing-worker'],
    ];
    expect(keys((await list(`${window}&limit=50`)).body.items)).toEqual(byTime);
    // The pages ordered by a value (another read) and the cursor's next page carry them too.
    const byCost = (await list(`${window}&limit=2&sort=cost_usd`)).body;
    expect(keys(byCost.items)).toEqual([byTime[0], byTime[3]]);
    expect(keys((await list(`${window}&limit=2&sort=cost_usd&cursor=${byCost.next_cursor}`)).body.items)).toEqual([byTime[1], byTime[2]]);

    // One lookup for a page, of its distinct keys; none for a page without keys.
    const lookups: string[][] = [];
    const listing = createExecutionListing(svc.stores.clickhouse, {
      scoreFilter: scoreFilterSql,
      keyNames: (projectId, ids) => (lookups.push([...ids].sort()), apiKeyNames(svc.stores.postgres, projectId, ids)),
    });
    const q = { start: '2026-07-20T00:00:00Z', end: '2026-07-21T00:00:00Z', offset: 0 };
    expect(keys((await listing.list('default', { ...q, limit: 50 })).items)).toEqual(byTime);
    expect(lookups).toEqual([[billing.id, search.id].sort()]);
    expect(keys((await listing.list('default', { ...q, limit: 1 })).items)).toEqual([byTime[0]]);
    expect(lookups).toHaveLength(1);

    // The key's row gone: the id stays, the name is null.
    await svc.stores.postgres.query('DELETE FROM api_keys WHERE key_id = $1', [billing.id]);
    expect(keys((await list(`${window}&limit=50`)).body.items)).toEqual([
      byTime[0],
      ['key-a2', billing.id, null],
      byTime[2],
      ['key-a1', billing.id, null],
    ]);
  });

  it('many corrections: cursor and offset pages of every size and the export show each execution once, at its newest version', async () => {
    // 24 executions on one day; every other one corrected twice (cancel + new version, twice), so
    // a page's raw read ends inside a trace's group of rows at many page sizes.
    const ch = svc.stores.clickhouse;
    const day = '2026-07-04';
    for (let i = 0; i < 24; i++) {
      const started = `${day}T10:${String(i).padStart(2, '0')}:00Z`;
      expect((await post({ trace_id: `many-${i}`, cost_usd: 1, started_at: started, model: 'v1' })).status).toBe(201);
    }
    for (let i = 0; i < 24; i += 2) {
      const [orig] = await ch.query<Record<string, unknown>>(
        "SELECT * REPLACE (toString(cost_usd) AS cost_usd) FROM executions WHERE project_id = 'default' AND trace_id = {t:String}",
        { t: `many-${i}` },
      );
      await ch.insert('executions', [
        { ...orig, sign: -1 },
        { ...orig, version: 2, model: 'v2', cost_usd: '2' },
      ]);
      await ch.insert('executions', [
        { ...orig, version: 2, model: 'v2', cost_usd: '2', sign: -1 },
        { ...orig, version: 3, model: 'v3', cost_usd: '3' },
      ]);
    }
    const expected = Array.from({ length: 24 }, (_, i) => 23 - i).map((i) => [`many-${i}`, i % 2 === 0 ? 'v3' : 'v1']);
    const window = `start=${day}T00:00:00Z&end=${day}T23:59:59Z`;
    for (const limit of [1, 2, 3, 5, 7, 50]) {
      const seen: string[][] = [];
      let cursor: string | null = null;
      do {
        const r = await list(`${window}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.body.total).toBe(24);
        seen.push(...r.body.items.map((i: { trace_id: string; model: string }) => [i.trace_id, i.model]));
        cursor = r.body.next_cursor;
      } while (cursor);
      expect(seen, `cursor pages of ${limit}`).toEqual(expected);
      const byOffset = await list(`${window}&limit=${limit}&offset=${limit}`);
      expect(byOffset.body.items.map((i: { trace_id: string; model: string }) => [i.trace_id, i.model])).toEqual(
        expected.slice(limit, 2 * limit),
      );
    }
    const lines = (await (await fetch(`${svc.url}${P}/executions/export?${window}`)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((i: { trace_id: string; model: string }) => [i.trace_id, i.model])).toEqual(expected);
    // Past the raw-read bound the engine collapses (FINAL): the same pages.
    const bounded = createExecutionListing(ch, { maxRawRead: 3, scoreFilter: scoreFilterSql });
    for (const [limit, offset] of [
      [5, 0],
      [5, 5],
      [50, 0],
      [3, 20],
    ]) {
      const page = await bounded.list('default', { start: `${day}T00:00:00Z`, end: `${day}T23:59:59Z`, limit: limit!, offset: offset! });
      expect(
        page.items.map((i) => [i.trace_id, i.model]),
        `limit ${limit} offset ${offset}`,
      ).toEqual(expected.slice(offset, offset! + limit!));
      expect(page.total).toBe(24);
    }
  });

  it('exports a filtered set as JSON Lines and CSV, the same executions as the listing', async () => {
    const filter = 'start=2026-10-01T00:00:00Z&end=2026-10-31T00:00:00Z&provider=openai,google';
    const listed = (await list(`${filter}&limit=1000`)).body.items;
    expect(listed.length).toBeGreaterThan(10);
    const jsonl = await fetch(`${svc.url}${P}/executions/export?${filter}`);
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await jsonl.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // A line is the list item without what only the list shows (user, session, tags, the API key:
    // the Parquet export carries those as typed columns; the key's name only the list).
    expect(lines).toEqual(
      listed.map(({ user_id: _u, session_id: _s, tags: _t, api_key_id: _k, api_key_name: _n, ...item }: Record<string, unknown>) => item),
    );
    const csv = await fetch(`${svc.url}${P}/executions/export?format=csv&${filter}`);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.headers.get('content-disposition')).toContain('executions-default.csv');
    const rows = (await csv.text()).trim().split('\r\n');
    expect(rows[0]).toBe(
      'trace_id,started_at,agent_id,provider,model,status,tokens_in,tokens_out,latency_ms,cost_usd,cost_source,has_templates,template_count,span_count,source',
    );
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual(listed.map((i: { trace_id: string }) => i.trace_id));
    expect((await getJson(`${svc.url}${P}/executions/export?format=xml`)).status).toBe(400);
    expect((await getJson(`${svc.url}${P}/executions/export?limit=5`)).body.detail).toContain('limit: unknown query parameter');
    const empty = await fetch(`${svc.url}${P}/executions/export?start=2001-01-01T00:00:00Z&end=2001-01-02T00:00:00Z&format=csv`);
    expect((await empty.text()).trim().split('\r\n')).toHaveLength(1); // the header only
  });

  it('bad parameters are 400 naming the parameter', async () => {
    for (const [qs, param] of [
      ['limit=0', 'limit'],
      ['min_cost=cheap', 'min_cost'],
      ['has_templates=maybe', 'has_templates'],
      ['status=weird', 'status'],
      ['start=soon', 'start'],
      ['start=2026-10-05T00:00:00Z&end=2026-10-01T00:00:00Z', 'start'],
      ['min_cost=2&max_cost=1', 'min_cost'],
      ['cursor=garbage', 'cursor'],
      ['cursor=WyIyMDI2LTExLTIyIDA3OjIwOjI2LjQyOSIsInQyIl0&offset=5', 'offset'],
      ['colour=red', 'colour'],
    ]) {
      const r = await list(qs!);
      expect(r.status, qs).toBe(400);
      expect(r.body.detail, qs).toContain(`${param}:`);
    }
  });

  it('daily spend equals the sum of the listed executions, after retries and a restart', async () => {
    const all = (await list('limit=1000')).body;
    const sumListed = all.items.reduce((n: bigint, i: { cost_usd: number }) => n + BigInt(Math.round(i.cost_usd * 1e9)), 0n);
    const spend = await dailySpend();
    expect(spend.executions).toBe(all.total);
    expect(BigInt(Math.round(Number(spend.cost) * 1e9))).toBe(sumListed);
  });

  it('1,000 executions of 0.000123 add up to exactly 0.123 in daily spend', async () => {
    const before = await dailySpend();
    for (let i = 0; i < 1000; i += 250) {
      const rs = await Promise.all(
        Array.from({ length: 250 }, (_, j) => post({ trace_id: `penny-${i + j}`, cost_usd: 0.000123, started_at: '2026-09-15T12:00:00Z' })),
      );
      expect(rs.every((r) => r.status === 201)).toBe(true);
    }
    const [r] = await svc.stores.clickhouse.query<{ cost: string; n: string }>(
      "SELECT toString(sum(cost_usd)) AS cost, toString(sum(executions)) AS n FROM spend_by_dims WHERE project_id = 'default' AND grain = 'day' AND bucket = '2026-09-15 00:00:00'",
    );
    expect(r).toEqual({ cost: '0.123', n: '1000' });
    expect((await dailySpend()).executions).toBe(before.executions + 1000);
  }, 180_000);
});

describe('backpressure', () => {
  it('a full write queue answers 503 + Retry-After and writes nothing for that request', async () => {
    const small = await startTestService({ INGEST_MAX_QUEUE_ROWS: '2', INGEST_FLUSH_MS: '60000', INGEST_BATCH_ROWS: '1000' });
    try {
      const url = small.url;
      const pending = [post({ trace_id: 'bp-1', cost_usd: 1 }, url), post({ trace_id: 'bp-2', cost_usd: 1 }, url)];
      await new Promise((r) => setTimeout(r, 300)); // both queued, waiting for the (long) flush interval
      const refused = await post({ trace_id: 'bp-3', cost_usd: 1 }, url);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body.detail).toMatch(/queue is full/);
      await small.domain.executions.writer.flush();
      expect((await Promise.all(pending)).map((r) => r.status)).toEqual([201, 201]);
      expect((await getJson(`${url}${P}/executions/bp-3`)).status).toBe(404);
      const retry = post({ trace_id: 'bp-3', cost_usd: 1 }, url); // the retry lands
      await new Promise((r) => setTimeout(r, 300));
      await small.domain.executions.writer.flush();
      expect((await retry).status).toBe(201);
    } finally {
      await small.close();
    }
  });
});
