// The executions list ordered by the server (sort=cost_usd|latency_ms|tokens|started_at, order),
// walked by cursors to the end and compared with the order computed here, through corrections
// that change a cost; exclusion filters; the latest score values in the list; sessions pages,
// count, search and order; a session as one conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { correctExecution } from '../helpers/corrections.ts';
import { createExecutionListing } from '../../src/executions/execution-listing-repository.ts';
import { scoreFilterSql } from '../../src/scores/score-aggregate-repository.ts';

let svc: TestService;
const P = '/api/projects/default';
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    ...(body !== undefined ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
const get = (path: string) => call('GET', path);

interface Exec {
  trace_id: string;
  agent_id: string;
  model: string;
  cost_usd: number;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  started_at: string;
  tags: string[];
  user_id: string;
}
const T0 = Date.parse('2026-10-01T00:00:00.000Z');
const execs: Exec[] = [];

beforeAll(async () => {
  svc = await startTestService({ AUTH_REQUIRED: 'false' });
  // 45 executions: costs repeat (ties broken by time, then id), some at one instant (ties by id).
  for (let i = 0; i < 45; i++) {
    const e: Exec = {
      trace_id: `o-${String(i).padStart(2, '0')}`,
      agent_id: ['alpha', 'beta', 'judge'][i % 3]!,
      model: i % 4 === 0 ? 'gpt-4o' : 'gpt-4o-mini',
      cost_usd: Number((((i * 37) % 11) / 1000).toFixed(3)),
      latency_ms: (i * 53) % 97,
      tokens_in: (i * 7) % 13,
      tokens_out: (i * 5) % 17,
      started_at: new Date(T0 + Math.floor(i / 2) * 60_000).toISOString(),
      tags: i % 3 === 2 ? ['evaluator'] : i % 5 === 0 ? ['vip'] : [],
      user_id: `u-${i % 4}`,
    };
    execs.push(e);
  }
  for (const e of execs) expect((await call('POST', '/executions', { ...e, provider: 'openai' })).status).toBe(201);
  // Corrections change costs: the old version's cost must not show, the new one sorts at its place.
  await correctExecution(svc.stores.clickhouse, 'o-03', { cost_usd: '0.05' });
  execs.find((e) => e.trace_id === 'o-03')!.cost_usd = 0.05;
  await correctExecution(svc.stores.clickhouse, 'o-10', { cost_usd: '0' });
  execs.find((e) => e.trace_id === 'o-10')!.cost_usd = 0;
  // A newer version written without cancelling the old one (two writers racing): the newest counts.
  const [row] = await svc.stores.clickhouse.query<Record<string, unknown>>(
    "SELECT * FROM executions WHERE project_id = 'default' AND trace_id = 'o-20' AND sign = 1 ORDER BY version DESC LIMIT 1",
  );
  await svc.stores.clickhouse.insert('executions', [{ ...row, version: Number(row!.version) + 5, cost_usd: '0.0001', latency_ms: 500 }]);
  Object.assign(
    execs.find((e) => e.trace_id === 'o-20')!,
    { cost_usd: 0.0001, latency_ms: 500 },
  );
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

type Key = 'cost_usd' | 'latency_ms' | 'tokens' | 'started_at';
const valueOf = (e: Exec, k: Key) => (k === 'tokens' ? e.tokens_in + e.tokens_out : k === 'started_at' ? Date.parse(e.started_at) : e[k]);
function expected(k: Key, order: 'asc' | 'desc', keep: (e: Exec) => boolean = () => true): string[] {
  const d = order === 'desc' ? -1 : 1;
  return execs
    .filter(keep)
    .sort(
      (a, b) =>
        d * (valueOf(a, k) - valueOf(b, k)) ||
        d * (Date.parse(a.started_at) - Date.parse(b.started_at)) ||
        d * (a.trace_id < b.trace_id ? -1 : a.trace_id > b.trace_id ? 1 : 0),
    )
    .map((e) => e.trace_id);
}

async function walk(qs: string, limit = 7): Promise<{ ids: string[]; totals: number[]; costs: Record<string, number> }> {
  const ids: string[] = [];
  const totals: number[] = [];
  const costs: Record<string, number> = {};
  let cursor = '';
  for (let pages = 0; pages < 50; pages++) {
    const r = await get(`/executions?${qs}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const i of r.body.items) {
      ids.push(i.trace_id);
      costs[i.trace_id] = i.cost_usd;
    }
    totals.push(r.body.total);
    if (!r.body.next_cursor) break;
    cursor = r.body.next_cursor;
  }
  return { ids, totals, costs };
}

describe(`executions ordered by the server (${mode} mode)`, () => {
  for (const k of ['cost_usd', 'latency_ms', 'tokens', 'started_at'] as const)
    for (const order of ['desc', 'asc'] as const)
      it(`sort=${k}&order=${order}: cursor pages, put end to end, are the whole order; totals unchanged`, async () => {
        const { ids, totals, costs } = await walk(`sort=${k}&order=${order}`);
        expect(ids).toEqual(expected(k, order));
        // The total is the unordered list's (a sum of sign: the uncancelled version above counts in it too).
        expect(new Set(totals)).toEqual(new Set([(await get('/executions?limit=1')).body.total]));
        expect(costs['o-03']).toBe(0.05);
        expect(costs['o-20']).toBe(0.0001);
      });

  it('an offset page is the same slice of the order, and filters hold under any order', async () => {
    const r = await get('/executions?sort=cost_usd&offset=5&limit=6');
    expect(r.body.items.map((i: Exec) => i.trace_id)).toEqual(expected('cost_usd', 'desc').slice(5, 11));
    const f = await walk('sort=latency_ms&model=gpt-4o-mini&start=2026-10-01T00:05:00Z', 4);
    expect(f.ids).toEqual(
      expected('latency_ms', 'desc', (e) => e.model === 'gpt-4o-mini' && Date.parse(e.started_at) >= Date.parse('2026-10-01T00:05:00Z')),
    );
  });

  it('past the raw-read bound (FINAL, collapsed by the engine) gives the same pages', async () => {
    const bounded = createExecutionListing(svc.stores.clickhouse, { maxRawRead: 3, scoreFilter: scoreFilterSql });
    for (const order of ['desc', 'asc'] as const) {
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const r = await bounded.list('default', {
          sort: 'cost_usd',
          order,
          limit: 6,
          offset: 0,
          exclude_user_id: ['u-0'],
          ...(cursor ? { cursor } : {}),
        });
        ids.push(...r.items.map((i) => i.trace_id));
        if (!r.next_cursor) break;
        cursor = r.next_cursor;
      }
      // (u-0 left out: FINAL does not collapse o-20's uncancelled older version, in any order: docs/executions.md.)
      expect(ids).toEqual(expected('cost_usd', order, (e) => e.user_id !== 'u-0'));
    }
    const page = await bounded.list('default', { sort: 'latency_ms', limit: 5, offset: 5, exclude_user_id: ['u-0'] });
    expect(page.items.map((i) => i.trace_id)).toEqual(expected('latency_ms', 'desc', (e) => e.user_id !== 'u-0').slice(5, 10));
  });

  it('refuses a cursor given with another order, and an unknown sort, naming the parameter', async () => {
    const first = await get('/executions?sort=cost_usd&limit=5');
    const c = first.body.next_cursor as string;
    const r = await get(`/executions?sort=latency_ms&cursor=${c}`);
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/^cursor: was returned for sort=cost_usd&order=desc/);
    expect((await get(`/executions?sort=cost_usd&order=asc&cursor=${c}`)).status).toBe(400);
    const time = await get('/executions?limit=5');
    expect((await get(`/executions?sort=cost_usd&cursor=${time.body.next_cursor}`)).body.detail).toMatch(/^cursor:/);
    const bad = await get('/executions?sort=price');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/sort/);
    const tampered = Buffer.from(JSON.stringify(['cost_usd', 'desc', "1'); DROP", '2026-10-01 00:00:00.000', 'x'])).toString('base64url');
    expect((await get(`/executions?sort=cost_usd&cursor=${tampered}`)).status).toBe(400);
  });
});

describe(`exclusion filters (${mode} mode)`, () => {
  const ids = async (qs: string) => (await walk(qs, 100)).ids.sort();
  const where = (keep: (e: Exec) => boolean) =>
    execs
      .filter(keep)
      .map((e) => e.trace_id)
      .sort();

  it('leaves out agents, tags, models and users; with the other filters; totals agree', async () => {
    expect(await ids('exclude_tag=evaluator')).toEqual(where((e) => !e.tags.includes('evaluator')));
    expect(await ids('exclude_agent_id=judge,beta')).toEqual(where((e) => e.agent_id === 'alpha'));
    expect(await ids('exclude_agent_id=judge&exclude_agent_id=beta')).toEqual(where((e) => e.agent_id === 'alpha'));
    expect(await ids('exclude_model=gpt-4o&exclude_user_id=u-1&tag=vip')).toEqual(
      where((e) => e.model !== 'gpt-4o' && e.user_id !== 'u-1' && e.tags.includes('vip')),
    );
    expect(await ids('exclude_source=api')).toEqual([]);
    expect((await ids('source=api&exclude_environment=prod')).length).toBe(45);
    const r = await get('/executions?exclude_tag=evaluator&limit=1');
    expect(r.body.total).toBe(where((e) => !e.tags.includes('evaluator')).length);
    // The export applies the same exclusions.
    const lines = await fetch(`${svc.url}${P}/executions/export?exclude_agent_id=judge,beta`).then((x) => x.text());
    expect(lines.trim().split('\n').length).toBe(where((e) => e.agent_id === 'alpha').length);
  });

  it('refuses an unknown exclusion, naming it', async () => {
    const r = await get('/executions?exclude_colour=red');
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/exclude_colour/);
  });
});

describe(`score values in the list (${mode} mode)`, () => {
  it('gives each item the latest live value of each name asked for, null when none', async () => {
    const score = (body: object) => call('POST', '/scores', body);
    expect((await score({ id: 's1', trace_id: 'o-00', name: 'helpfulness', value: 0.4 })).status).toBe(201);
    expect((await score({ id: 's2', trace_id: 'o-00', name: 'helpfulness', value: 0.9 })).status).toBe(201);
    expect((await score({ id: 's3', trace_id: 'o-01', name: 'correct', value: true })).status).toBe(201);
    expect((await score({ id: 's4', trace_id: 'o-01', name: 'tone', value: 'curt' })).status).toBe(201);
    expect((await score({ id: 's1', trace_id: 'o-00', name: 'helpfulness', value: 0.2 })).status).toBeLessThan(300); // s1 updated last
    const r = await get('/executions?sort=started_at&order=asc&limit=3&scores=helpfulness,correct&scores=tone');
    expect(r.status).toBe(200);
    const by = Object.fromEntries(r.body.items.map((i: { trace_id: string; scores: unknown }) => [i.trace_id, i.scores]));
    expect(by['o-00']).toEqual({ helpfulness: 0.2, correct: null, tone: null });
    expect(by['o-01']).toEqual({ helpfulness: null, correct: true, tone: 'curt' });
    expect(by['o-02']).toEqual({ helpfulness: null, correct: null, tone: null });
    expect((await get('/executions?limit=1')).body.items[0].scores).toBeUndefined();
  });
});

describe(`sessions: pages, count, search, order, conversation (${mode} mode)`, () => {
  beforeAll(async () => {
    const base = Date.parse('2026-09-01T00:00:00.000Z');
    const runs = [];
    for (let s = 0; s < 25; s++)
      for (let k = 0; k <= s % 3; k++)
        runs.push({
          trace_id: `sess-${s}-${k}`,
          agent_id: 'chat',
          provider: 'openai',
          model: 'gpt-4o-mini',
          tokens_in: 1,
          tokens_out: 1,
          latency_ms: 1,
          cost_usd: s === 7 ? 1 : 0.001,
          started_at: new Date(base + s * 3_600_000 + k * 60_000).toISOString(),
          session_id: `chat-${s}`,
          user_id: s % 2 ? 'ada' : 'bob',
          ...(s === 4 && k === 1 ? { status: 'error' } : {}),
        });
    for (const r of runs) expect((await call('POST', '/executions', r)).status).toBe(201);
  });
  const W = 'start=2026-09-01T00:00:00Z&end=2026-09-03T00:00:00Z';

  it('pages by offset through every session of the window, most recent first, with their count', async () => {
    const all: string[] = [];
    for (let offset = 0; offset < 30; offset += 10) {
      const r = await get(`/sessions?${W}&limit=10&offset=${offset}&with_total=true`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ total: 25, limit: 10, offset });
      all.push(...r.body.items.map((i: { session_id: string }) => i.session_id));
    }
    expect(all).toEqual(Array.from({ length: 25 }, (_, i) => `chat-${24 - i}`));
    expect((await get(`/sessions?${W}&offset=10001`)).status).toBe(400);
  });

  it('searches session and user ids, and orders by cost, executions or errors', async () => {
    const s = await get(`/sessions?${W}&search=HAT-1&with_total=true`);
    expect(s.body.items.map((i: { session_id: string }) => i.session_id).sort()).toEqual(
      ['chat-1', ...Array.from({ length: 10 }, (_, i) => `chat-1${i}`)].sort(),
    );
    expect(s.body.total).toBe(11);
    const ada = await get(`/sessions?${W}&search=ada&limit=100&with_total=true`);
    expect(ada.body.total).toBe(12);
    expect(ada.body.items.every((i: { user_id: string }) => i.user_id === 'ada')).toBe(true);
    const cost = await get(`/sessions?${W}&sort=cost_usd&limit=2`);
    expect(cost.status, JSON.stringify(cost.body)).toBe(200);
    expect(cost.body.items[0]).toMatchObject({ session_id: 'chat-7', cost_usd: '2', executions: 2 });
    const execs2 = await get(`/sessions?${W}&sort=executions&limit=100`);
    expect(execs2.body.items.slice(0, 8).map((i: { executions: number }) => i.executions)).toEqual(Array(8).fill(3));
    expect(execs2.body.items[0].session_id).toBe('chat-23'); // ties: most recently seen first
    const errors = await get(`/sessions?${W}&sort=errors&limit=1&offset=0`);
    expect(errors.body.items[0]).toMatchObject({ session_id: 'chat-4', errors: 1 });
    expect((await get(`/sessions?${W}&sort=cost_usd&limit=5&offset=5&with_total=true`)).body).toMatchObject({ total: 25, offset: 5 });
    // The count is read only when asked for: it groups every session of the window.
    expect((await get(`/sessions?${W}&limit=5`)).body).toMatchObject({ total: null, limit: 5 });
  });

  it('shows a session as one conversation: each turn the messages it added, across pages', async () => {
    const sys = { role: 'system', content: 'Be brief' };
    const turns = [
      [sys, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }],
      [
        sys,
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: 'price?' },
        { role: 'assistant', content: '$5' },
      ],
      [
        { role: 'user', content: 'another agent, fresh context' },
        { role: 'assistant', content: 'ok' },
      ],
    ];
    // Recorded out of order.
    for (const i of [2, 0, 1])
      await call('POST', '/executions', {
        trace_id: `conv-${i}`,
        agent_id: 'chat',
        provider: 'openai',
        model: 'gpt-4o-mini',
        tokens_in: 1,
        tokens_out: 1,
        latency_ms: 1,
        started_at: new Date(Date.parse('2026-08-01T00:00:00Z') + i * 1000).toISOString(),
        session_id: 'talk',
        conversation_history: turns[i],
      });
    const p1 = await get('/sessions/talk/conversation?limit=2');
    expect(p1.status).toBe(200);
    expect(p1.body).toMatchObject({ session_id: 'talk', total: 3, limit: 2 });
    expect(p1.body.items.map((t: { trace_id: string; earlier_messages: number }) => [t.trace_id, t.earlier_messages])).toEqual([
      ['conv-0', 0],
      ['conv-1', 3],
    ]);
    expect(p1.body.items[1].messages.map((m: { content: string }) => m.content)).toEqual(['price?', '$5']);
    const p2 = await get(`/sessions/talk/conversation?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.items).toHaveLength(1);
    expect(p2.body.items[0]).toMatchObject({ trace_id: 'conv-2', earlier_messages: 0 });
    expect(p2.body.items[0].messages).toHaveLength(2);
    expect(p2.body.next_cursor).toBeNull();
    expect((await get('/sessions/nobody/conversation')).body).toMatchObject({ items: [], total: 0, next_cursor: null });
    expect((await get('/sessions/talk/conversation?cursor=nope')).status).toBe(400);
  });
});
