// Per-project prices over HTTP (GET/PUT/DELETE /api/projects/{pid}/models): statuses and roles,
// precedence over the catalogue for recorded executions, regex keys, provider scoping,
// effective_from history, cache invalidation (this node and another), tenant separation and
// exact decimals. Real stores, a real identity provider on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REGEX_INPUT, slowRegexReason, slowestRegexMs, unsafeRegexReason } from '../../src/pricing/regex-guard.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';

const idp = new TestIdp();
let svc: TestService;
const tokens: Record<'admin' | 'member' | 'viewer' | 'otherAdmin', string> = {} as never;
let apiKey = '';
const P = '/api/projects/shop';
const OTHER = '/api/projects/other-shop';

type Who = keyof typeof tokens | 'key' | 'none';
function headers(who: Who, json: boolean): Record<string, string> {
  const h: Record<string, string> = json ? { 'Content-Type': 'application/json' } : {};
  if (who === 'key') h['X-API-Key'] = apiKey;
  else if (who !== 'none') h.Authorization = `Bearer ${tokens[who]}`;
  return h;
}
const call = (method: string, path: string, body?: unknown, who: Who = 'admin', url = svc.url) =>
  getJson(`${url}${path}`, {
    method,
    headers: headers(who, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const put = (model: string, body: unknown, who: Who = 'admin', project = P) =>
  call('PUT', `${project}/models/${encodeURIComponent(model)}`, body, who);
let traces = 0;
const record = (body: Record<string, unknown>, project = P, url = svc.url) =>
  call('POST', `${project}/executions`, { trace_id: `mp-${++traces}-${Date.now()}`, ...body }, project === P ? 'admin' : 'otherAdmin', url);

beforeAll(async () => {
  await idp.start();
  svc = await startTestService(idp.env({ AUTH_REQUIRED: 'true' }));
  tokens.admin = await idp.token({ sub: 'alice', project_id: 'shop', role: 'admin' });
  tokens.member = await idp.token({ sub: 'bob', project_id: 'shop', role: 'member' });
  tokens.viewer = await idp.token({ sub: 'carol', project_id: 'shop', role: 'viewer' });
  tokens.otherAdmin = await idp.token({ sub: 'dave', project_id: 'other-shop', role: 'admin' });
  const k = await call('POST', `${P}/api-keys`, { name: 'agent' });
  expect(k.status).toBe(201);
  apiKey = k.body.key;
  // The other project exists (a token names it) before anything is asked of it.
  expect((await call('GET', `${OTHER}/models?source=project`, undefined, 'otherAdmin')).status).toBe(200);
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

describe(`project model prices (${mode} mode)`, () => {
  it('PUT stores a price (200), exactly; GET lists it before the catalogue; DELETE removes it (204, then 404)', async () => {
    const r = await put('house-llm', { provider: 'acme', input_per_mtok: 0.123, output_per_mtok: 0.0000001, cached_input_per_mtok: 0 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      source: 'project',
      provider: 'acme',
      model: 'house-llm',
      match: null,
      input_per_mtok: 0.123,
      output_per_mtok: 0.0000001,
      cached_input_per_mtok: 0,
      cache_write_per_mtok: null,
      in_force: true,
      created_by: 'alice',
    });
    expect(r.body.price_id).toMatch(/^project:[0-9a-f-]{36}$/);
    expect(r.body.effective_from).toBeNull(); // undated: the model's base price
    // Exact decimal strings in storage, never floats
    const [stored] = await svc.stores.postgres.query<{ i: string; o: string }>(
      `SELECT input_per_mtok::text AS i, output_per_mtok::text AS o FROM model_prices WHERE project_id = 'shop' AND model = 'house-llm'`,
    );
    expect(stored).toEqual({ i: '0.123000000000', o: '0.000000100000' });

    const list = await call('GET', `${P}/models?limit=3`, undefined, 'viewer');
    expect(list.status).toBe(200);
    expect(list.body.items[0]).toEqual(r.body);
    expect(list.body.items[1].source).toBe('catalogue');
    expect(list.body.total).toBeGreaterThan(1000); // the bundled catalogue is large: paginated
    expect(list.body).toMatchObject({ limit: 3, offset: 0 });

    expect((await call('DELETE', `${P}/models/house-llm`)).status).toBe(204);
    const gone = await call('DELETE', `${P}/models/house-llm`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ detail: 'Model price not found' });
    expect((await call('GET', `${P}/models?source=project`)).body.total).toBe(0);
  });

  it('validation: 400 naming the field for a bad regex, a catastrophic one, a negative price, an unknown field, a bad date', async () => {
    const base = { input_per_mtok: 1, output_per_mtok: 2 };
    const cases: Array<[unknown, string]> = [
      [{ ...base, match: 'gpt-(4o' }, 'match: is not a valid regular expression'],
      [{ ...base, match: '^(a+)+$' }, 'match: a repeated group'],
      [{ ...base, match: '(x|y)*z' }, 'match: a repeated group'],
      [{ ...base, match: 'a'.repeat(201) }, 'match:'],
      [{ ...base, match: '^.*.*.*.*.*X$' }, 'match: at most one unbounded quantifier'],
      [{ ...base, match: '^\\d*\\d*\\d*\\d*\\d*\\d*$' }, 'match: at most one unbounded quantifier'],
      [{ ...base, input_per_mtok: -0.5 }, 'input_per_mtok:'],
      [{ ...base, cache_write_per_mtok: -1 }, 'cache_write_per_mtok:'],
      [{ ...base, output_per_mtok: '2' }, 'output_per_mtok:'],
      [{ input_per_mtok: 1 }, 'output_per_mtok: is required'],
      [{ ...base, colour: 'red' }, 'colour: unknown field'],
      [{ ...base, effective_from: 'yesterday' }, 'effective_from:'],
      [{ ...base, effective_from: '2026-02-30T00:00:00Z' }, 'effective_from:'], // no such day (not 2026-03-02)
    ];
    for (const [body, detail] of cases) {
      const r = await put('validated', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.detail, JSON.stringify(body)).toContain(detail);
    }
    expect((await put('has space', base)).body.detail).toContain('model:');
    // Harmless quantified groups are accepted
    expect((await put('validated', { ...base, match: '^gpt-4o(-mini)?(-\\d{4}-\\d{2}-\\d{2})?$' })).status).toBe(200);
    expect((await put('validated', { ...base, match: 'claude-3.*sonnet' })).status).toBe(200);
    expect((await call('DELETE', `${P}/models/validated`)).status).toBe(204);
    for (const qs of ['limit=0', 'source=mine', 'colour=red', 'offset=-1']) {
      const r = await call('GET', `${P}/models?${qs}`);
      expect(r.status, qs).toBe(400);
    }
    expect((await put('no-rows', base)).status).toBe(200); // and 'no-rows' stays absent for the rest
    expect((await call('DELETE', `${P}/models/no-rows`)).status).toBe(204);
  });

  it('roles: reading is for every role; PUT and DELETE are admin only (403 member, viewer, API key; 401 without credentials)', async () => {
    const body = { input_per_mtok: 1, output_per_mtok: 1 };
    for (const who of ['member', 'viewer', 'key'] as const) {
      const r = await put('guarded', body, who);
      expect(r.status, who).toBe(403);
      expect(r.body).toEqual({ detail: 'Forbidden - User does not have access to this resource' });
      expect((await call('DELETE', `${P}/models/guarded`, undefined, who)).status, who).toBe(403);
      expect((await call('GET', `${P}/models?source=project`, undefined, who)).status, who).toBe(200);
    }
    expect((await put('guarded', body, 'none')).status).toBe(401);
    expect((await call('GET', `${P}/models`, undefined, 'none')).status).toBe(401);
    expect((await call('DELETE', `${P}/models/guarded`, undefined, 'none')).status).toBe(401);
    // An admin of another project is not an admin here
    expect((await put('guarded', body, 'otherAdmin')).status).toBe(403);
    expect((await call('GET', `${P}/models?source=project`)).body.total).toBe(0);
  });

  it('a project price overrides the catalogue for a recorded execution; the other project keeps the catalogue', async () => {
    const usage = { provider: 'openai', model: 'gpt-4o-mini', tokens_in: 1000, tokens_out: 500, started_at: '2026-11-01T10:00:00.000Z' };
    const before = await record(usage);
    expect(before.status).toBe(201);
    expect(before.body).toMatchObject({ price_id: 'catalogue:openai/gpt-4o-mini', cost_usd: 0.00045, cost_source: 'computed' }); // 1000 × 0.15 + 500 × 0.6

    const p = await put('gpt-4o-mini', { input_per_mtok: 1, output_per_mtok: 2, effective_from: '2026-01-01T00:00:00Z' });
    expect(p.status).toBe(200);
    const after = await record(usage);
    expect(after.status).toBe(201);
    expect(after.body).toMatchObject({ price_id: p.body.price_id, cost_usd: 0.002, cost_computed_usd: 0.002, cost_source: 'computed' }); // 1000 × 1 + 500 × 2
    // The stored execution says the same
    const detail = await call('GET', `${P}/executions/${after.body.trace_id}`);
    expect(detail.body).toMatchObject({ price_id: p.body.price_id, cost_usd: 0.002 });

    const other = await record(usage, OTHER);
    expect(other.status).toBe(201);
    expect(other.body).toMatchObject({ price_id: 'catalogue:openai/gpt-4o-mini', cost_usd: 0.00045 });
    const otherTable = await call('GET', `${OTHER}/models?q=gpt-4o-mini&provider=openai`, undefined, 'otherAdmin');
    expect(otherTable.body.items.every((i: { source: string }) => i.source === 'catalogue')).toBe(true);
    expect(otherTable.body.items.map((i: { model: string }) => i.model)).toContain('gpt-4o-mini');
    // And the other project's admin cannot remove this project's price
    expect((await call('DELETE', `${P}/models/gpt-4o-mini`, undefined, 'otherAdmin')).status).toBe(403);

    expect((await call('DELETE', `${P}/models/gpt-4o-mini`)).status).toBe(204);
    expect((await record(usage)).body.price_id).toBe('catalogue:openai/gpt-4o-mini'); // the catalogue applies again
  });

  it('exact decimals: 0.123 per MTok × 1,000,000 tokens = 0.123; 1,000 calls sum without drift', async () => {
    await put('penny-model', { input_per_mtok: 0.123, output_per_mtok: 0.000123, effective_from: '2020-01-01T00:00:00Z' });
    const r = await record({ model: 'penny-model', tokens_in: 1_000_000, tokens_out: 0, started_at: '2026-11-02T00:00:00Z' });
    expect(r.body).toMatchObject({ cost_usd: 0.123, cost_source: 'computed' });
    const r2 = await record({ model: 'penny-model', tokens_in: 0, tokens_out: 1_000_000_000, started_at: '2026-11-02T00:00:01Z' });
    expect(r2.body.cost_usd).toBe(0.123); // 0.000123 × 1000 Mtok, exactly
  });

  it('a regex key prices every matching model id; an exact key wins over a regex; provider scoping holds', async () => {
    const family = await put('claude-family', {
      match: '^claude-3-5-sonnet-\\d{8}$',
      input_per_mtok: 10,
      output_per_mtok: 0,
      effective_from: '2020-01-01T00:00:00Z',
    });
    expect(family.status).toBe(200);
    expect(family.body.match).toBe('^claude-3-5-sonnet-\\d{8}$');
    const at = '2026-11-03T00:00:00Z';
    const hit = await record({ provider: 'anthropic', model: 'claude-3-5-sonnet-20241022', tokens_in: 1_000_000, started_at: at });
    expect(hit.body).toMatchObject({ price_id: family.body.price_id, cost_usd: 10 });
    const miss = await record({ provider: 'anthropic', model: 'claude-3-5-sonnet-latest', tokens_in: 1_000_000, started_at: at });
    expect(miss.body.price_id).not.toBe(family.body.price_id);

    const exact = await put('claude-3-5-sonnet-20241022', {
      input_per_mtok: 20,
      output_per_mtok: 0,
      effective_from: '2020-01-01T00:00:00Z',
    });
    const exactHit = await record({ provider: 'anthropic', model: 'claude-3-5-sonnet-20241022', tokens_in: 1_000_000, started_at: at });
    expect(exactHit.body).toMatchObject({ price_id: exact.body.price_id, cost_usd: 20 });
    const stillRegex = await record({ provider: 'anthropic', model: 'claude-3-5-sonnet-20240620', tokens_in: 1_000_000, started_at: at });
    expect(stillRegex.body).toMatchObject({ price_id: family.body.price_id, cost_usd: 10 });

    // A key with a slash in its name travels URL-encoded
    const slashed = await put('acme/house-llm', {
      provider: 'acme',
      input_per_mtok: 4,
      output_per_mtok: 0,
      effective_from: '2020-01-01T00:00:00Z',
    });
    expect(slashed.status).toBe(200);
    expect(slashed.body.model).toBe('acme/house-llm');
    const base = { model: 'acme/house-llm', tokens_in: 1_000_000, started_at: at };
    expect((await record({ ...base, provider: 'ACME' })).body).toMatchObject({ price_id: slashed.body.price_id, cost_usd: 4 });
    expect((await record({ ...base })).body).toMatchObject({ price_id: slashed.body.price_id, cost_usd: 4 }); // no provider reported
    expect((await record({ ...base, provider: 'other' })).body).toMatchObject({ price_id: null, cost_source: 'unpriced', cost_usd: 0 });
    const listed = await call('GET', `${P}/models?source=project&provider=acme`);
    expect(listed.body.items.map((i: { model: string }) => i.model)).toEqual(['acme/house-llm']);
    expect((await call('DELETE', `${P}/models/${encodeURIComponent('acme/house-llm')}`)).status).toBe(204);
  });

  it('effective_from history: a call before the new price uses the old one, after it the new one', async () => {
    const v1 = await put('hist-model', { input_per_mtok: 1, output_per_mtok: 0, effective_from: '2024-01-01T00:00:00Z' });
    const v2 = await put('hist-model', { input_per_mtok: 2, output_per_mtok: 0, effective_from: '2024-06-01T00:00:00Z' });
    const future = await put('hist-model', { input_per_mtok: 9, output_per_mtok: 0, effective_from: Date.now() + 86_400_000 });
    expect([v1.status, v2.status, future.status]).toEqual([200, 200, 200]);
    expect(future.body.in_force).toBe(false);
    const cost = async (started_at: string | number) => (await record({ model: 'hist-model', tokens_in: 1_000_000, started_at })).body;
    expect(await cost('2023-12-31T23:59:59.999Z')).toMatchObject({ cost_source: 'unpriced', price_id: null });
    expect(await cost('2024-01-01T00:00:00.000Z')).toMatchObject({ cost_usd: 1, price_id: v1.body.price_id });
    expect(await cost('2024-05-31T23:59:59.999Z')).toMatchObject({ cost_usd: 1, price_id: v1.body.price_id });
    expect(await cost('2024-06-01T00:00:00.000Z')).toMatchObject({ cost_usd: 2, price_id: v2.body.price_id });
    expect(await cost(Date.now() - 1000)).toMatchObject({ cost_usd: 2, price_id: v2.body.price_id });
    expect(await cost(Date.now() + 2 * 86_400_000)).toMatchObject({ cost_usd: 9, price_id: future.body.price_id });

    // The table shows the history newest first, with the row in force now marked
    const table = await call('GET', `${P}/models?source=project&q=HIST-model`);
    expect(table.body.items.map((i: { input_per_mtok: number; in_force: boolean }) => [i.input_per_mtok, i.in_force])).toEqual([
      [9, false],
      [2, true],
      [1, false],
    ]);

    // A PUT naming an existing effective_from replaces that row (a new price_id)
    const v2b = await put('hist-model', { input_per_mtok: 3, output_per_mtok: 0, effective_from: '2024-06-01T00:00:00.000Z' });
    expect(v2b.status).toBe(200);
    expect(v2b.body.price_id).not.toBe(v2.body.price_id);
    expect(v2b.body.in_force).toBe(true);
    expect((await call('GET', `${P}/models?source=project&q=hist-model`)).body.total).toBe(3);
    expect(await cost('2024-07-01T00:00:00.000Z')).toMatchObject({ cost_usd: 3, price_id: v2b.body.price_id });
  });

  it('an undated price is the base price: it prices a call that started before the PUT, and every call no dated row covers', async () => {
    // The call starts, then the price is set, then the call is recorded (as a trace finishing later would be).
    const startedBefore = new Date(Date.now() - 2_000).toISOString();
    const base = await put('base-model', { input_per_mtok: 3, output_per_mtok: 0 });
    expect(base.status).toBe(200);
    expect(base.body).toMatchObject({ effective_from: null, in_force: true });
    const cost = async (started_at: string | number) => (await record({ model: 'base-model', tokens_in: 1_000_000, started_at })).body;
    expect(await cost(startedBefore)).toMatchObject({ cost_usd: 3, price_id: base.body.price_id, cost_source: 'computed' });
    expect(await cost('2020-01-01T00:00:00.000Z')).toMatchObject({ cost_usd: 3, price_id: base.body.price_id }); // the past
    expect(await cost(Date.now() + 86_400_000)).toMatchObject({ cost_usd: 3, price_id: base.body.price_id }); // the future

    // A dated row overrides the base from its date on; before it, the base still applies
    const dated = await put('base-model', { input_per_mtok: 5, output_per_mtok: 0, effective_from: '2025-01-01T00:00:00Z' });
    expect(dated.body.in_force).toBe(true);
    expect(await cost('2024-12-31T23:59:59.999Z')).toMatchObject({ cost_usd: 3, price_id: base.body.price_id });
    expect(await cost('2025-01-01T00:00:00.000Z')).toMatchObject({ cost_usd: 5, price_id: dated.body.price_id });
    expect(await cost(startedBefore)).toMatchObject({ cost_usd: 5, price_id: dated.body.price_id });

    // A new undated PUT replaces the base (a new price_id); the dated row stays
    const base2 = await put('base-model', { input_per_mtok: 4, output_per_mtok: 0 });
    expect(base2.body.price_id).not.toBe(base.body.price_id);
    expect(base2.body).toMatchObject({ effective_from: null, in_force: false }); // the dated row is in force now
    expect(await cost('2024-06-01T00:00:00.000Z')).toMatchObject({ cost_usd: 4, price_id: base2.body.price_id });
    const table = await call('GET', `${P}/models?source=project&q=base-model`);
    expect(
      table.body.items.map((i: { input_per_mtok: number; effective_from: string | null; in_force: boolean }) => [
        i.input_per_mtok,
        i.effective_from,
        i.in_force,
      ]),
    ).toEqual([
      [5, '2025-01-01T00:00:00.000Z', true],
      [4, null, false],
    ]);
    const [row] = await svc.stores.postgres.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM model_prices WHERE project_id = 'shop' AND model = 'base-model'`,
    );
    expect(row?.n).toBe(2);
    expect((await call('DELETE', `${P}/models/base-model`)).status).toBe(204);
  });

  it('a price change is visible to the very next execution (the cache is dropped on PUT and DELETE)', async () => {
    const next = { model: 'next-model', tokens_in: 1_000_000 };
    expect((await record(next)).body.cost_source).toBe('unpriced'); // the project's table is now cached
    const a = await put('next-model', { input_per_mtok: 1, output_per_mtok: 0 });
    expect((await record(next)).body).toMatchObject({ cost_usd: 1, price_id: a.body.price_id });
    const b = await put('next-model', { input_per_mtok: 5, output_per_mtok: 0 });
    expect((await record(next)).body).toMatchObject({ cost_usd: 5, price_id: b.body.price_id });
    expect((await call('DELETE', `${P}/models/next-model`)).status).toBe(204);
    expect((await record(next)).body).toMatchObject({ cost_source: 'unpriced', price_id: null });
  });

  it('a price change reaches another node', async () => {
    const next = { model: 'node-model', tokens_in: 1_000_000 };
    // A second API process on the same stores (embedded stores belong to one process: there the
    // second node is this one, and the change must be visible at once).
    const other = mode === 'server' ? await startTestService({}, { env: svc.testEnv }) : svc;
    try {
      expect((await record(next, P, other.url)).body.cost_source).toBe('unpriced'); // cached there now
      const p = await put('node-model', { input_per_mtok: 7, output_per_mtok: 0 });
      const deadline = Date.now() + 5_000;
      let body = (await record(next, P, other.url)).body;
      while (body.price_id !== p.body.price_id && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        body = (await record(next, P, other.url)).body;
      }
      expect(body).toMatchObject({ price_id: p.body.price_id, cost_usd: 7 });
    } finally {
      if (other !== svc) await other.close();
    }
  });

  it('the catalogue part of the table: filters by provider and model substring, pages across both sources', async () => {
    const openai = await call('GET', `${P}/models?source=catalogue&provider=OpenAI&q=gpt-4o-mini&limit=1000`);
    expect(openai.status).toBe(200);
    expect(openai.body.items.length).toBeGreaterThan(0);
    expect(
      openai.body.items.every((i: { provider: string; model: string }) => i.provider === 'openai' && i.model.includes('gpt-4o-mini')),
    ).toBe(true);
    expect(openai.body.items.find((i: { model: string }) => i.model === 'gpt-4o-mini')).toMatchObject({
      source: 'catalogue',
      price_id: 'catalogue:openai/gpt-4o-mini',
      input_per_mtok: 0.15,
      output_per_mtok: 0.6,
      cached_input_per_mtok: 0.075,
      match: null,
      effective_from: null,
      in_force: true,
    });
    const own = (await call('GET', `${P}/models?source=project`)).body.total as number;
    expect(own).toBeGreaterThan(0);
    const all = (await call('GET', `${P}/models?limit=1`)).body.total as number;
    const catalogue = (await call('GET', `${P}/models?source=catalogue&limit=1`)).body.total as number;
    expect(all).toBe(own + catalogue);
    // A page straddling the boundary: the last project rows, then the first catalogue rows
    const page = await call('GET', `${P}/models?offset=${own - 1}&limit=3`);
    expect(page.body.items.map((i: { source: string }) => i.source)).toEqual(['project', 'catalogue', 'catalogue']);
    const firstCatalogue = (await call('GET', `${P}/models?source=catalogue&limit=2`)).body.items;
    expect(page.body.items.slice(1)).toEqual(firstCatalogue);
  });
});

describe('regex guard (no stores)', () => {
  it('refuses nested or alternating repetition and accepts ordinary model patterns', () => {
    for (const bad of ['(a+)+', '^(a+)+$', '(a*)*', '(x|y)*', '((ab)+c)+', '(?:a{2,})+', '(a+){2,5}', '(.*a){3}'])
      expect(unsafeRegexReason(bad), bad).toBeDefined();
    for (const ok of [
      '^gpt-4o$',
      '^gpt-4o(-mini)?$',
      '^claude-3-5-sonnet-\\d{8}$',
      'llama.*70b',
      '(a+)?',
      '[(]a+[)]',
      '[(]a[)]+',
      '\\(a\\)+',
      '^(gpt|o)\\d',
      '^gpt-4o(-mini)?(-\\d{4}-\\d{2}-\\d{2})?$',
      'claude-3.*sonnet',
      '[.*+]{2}.*',
    ])
      expect(unsafeRegexReason(ok), ok).toBeUndefined();
  });

  it('refuses several unbounded quantifiers (polynomial backtracking)', () => {
    for (const bad of ['^.*.*.*.*.*X$', '^\\d*\\d*\\d*\\d*\\d*\\d*$', 'a+b*', 'x.{2,}y.*', '\\w+-\\d+'])
      expect(unsafeRegexReason(bad), bad).toMatch(/at most one unbounded quantifier/);
  });

  it('times a pattern against adversarial model ids (in a worker, with a deadline)', async () => {
    expect(await slowRegexReason('^gpt-4o(-mini)?(-\\d{4}-\\d{2}-\\d{2})?$')).toBeUndefined();
    expect(await slowRegexReason('claude-3.*sonnet')).toBeUndefined();
    // passes the shape rules (bounded repetitions) but backtracks polynomially: the timing refuses it
    expect(unsafeRegexReason('^a{0,70}a{0,70}a{0,70}a{0,70}$')).toBeUndefined();
    expect(await slowRegexReason('^a{0,70}a{0,70}a{0,70}a{0,70}$')).toMatch(/takes .* ms on an adversarial model id/);
    // one that would run for minutes is cut off at the deadline
    expect(await slowestRegexMs('^a{0,200}a{0,200}a{0,200}a{0,200}a{0,200}a{0,200}$')).toBe(Infinity);
    expect(unsafeRegexReason('^(a|b){0,1}$')).toBeUndefined();
  });

  it('never runs a project regex on a model id longer than 256 characters', () => {
    expect(MAX_REGEX_INPUT).toBe(256);
  });
});
