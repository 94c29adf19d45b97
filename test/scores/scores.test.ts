// Scores and score configs over HTTP (docs/scores.md): idempotent upserts by id, batches stored
// whole or not at all, configs that hold scores to their rule and never change under them, a score
// sent before its trace joining the execution once assembled, deletes that drop a score at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { agentTrace } from '../helpers/ingest-log.ts';
import { until } from '../helpers/wait.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await dropTestDatabases();
});

const call = (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
const rawRows = async (id: string) =>
  Number(
    (
      await svc.stores.clickhouse.query<{ n: string }>(
        "SELECT count() AS n FROM scores WHERE project_id = 'default' AND id = {id:String}",
        { id },
      )
    )[0]!.n,
  );

describe(`scores (${mode} mode)`, () => {
  it('one score: 201 with its author and source; the same id again updates it, the same content writes nothing', async () => {
    const first = await call('POST', '/scores', { id: 's-1', trace_id: 'trace-s1', name: 'helpfulness', value: 0.5, comment: 'meh' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      id: 's-1',
      trace_id: 'trace-s1',
      span_id: null,
      name: 'helpfulness',
      data_type: 'NUMERIC',
      value: 0.5,
      comment: 'meh',
      source: 'api',
      author: 'dev',
      config_id: null,
    });
    expect(
      (await call('POST', '/scores', { id: 's-1', trace_id: 'trace-s1', name: 'helpfulness', value: 0.5, comment: 'meh' })).status,
    ).toBe(201);
    expect(await rawRows('s-1')).toBe(1); // unchanged: nothing written
    const updated = await call('POST', '/scores', { id: 's-1', trace_id: 'trace-s1', name: 'helpfulness', value: 0.9 });
    expect(updated.body).toMatchObject({ id: 's-1', value: 0.9, comment: null, created_at: first.body.created_at });
    expect(await rawRows('s-1')).toBe(3); // the row, its cancel row, the new row
    const listed = await call('GET', '/scores?trace_id=trace-s1');
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0]).toMatchObject({ id: 's-1', value: 0.9 });
    expect((await call('GET', '/scores/s-1')).body).toMatchObject({ value: 0.9 });
  });

  it('a batch is stored whole or not at all; a bad item is named by its index and field', async () => {
    const cfg = await call('POST', '/score-configs', { name: 'accuracy', data_type: 'NUMERIC', min_value: 0, max_value: 1 });
    expect(cfg.status, JSON.stringify(cfg.body)).toBe(201);
    const bad = await call('POST', '/scores', [
      { id: 'b-1', trace_id: 'trace-b', name: 'accuracy', value: 0.2 },
      { id: 'b-2', trace_id: 'trace-b', name: 'accuracy', value: 0.4 },
      { id: 'b-3', trace_id: 'trace-b', name: 'accuracy', value: 1.5 },
    ]);
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toBe('scores[2].value: must be <= 1 (score config "accuracy")');
    expect(await rawRows('b-1')).toBe(0);
    const repeated = await call('POST', '/scores', [
      { id: 'b-1', trace_id: 'trace-b', name: 'x', value: 1 },
      { id: 'b-1', trace_id: 'trace-b', name: 'x', value: 2 },
    ]);
    expect(repeated.status).toBe(400);
    expect(repeated.body.detail).toBe('scores[1].id: repeats scores[0].id ("b-1")');
    const ok = await call('POST', '/scores', [
      { id: 'b-1', trace_id: 'trace-b', name: 'accuracy', value: 0.2 },
      { id: 'b-2', trace_id: 'trace-b', name: 'accuracy', value: 1 },
    ]);
    expect(ok.status).toBe(201);
    expect(ok.body.items.map((s: { id: string; config_id: string }) => [s.id, s.config_id])).toEqual([
      ['b-1', cfg.body.config_id],
      ['b-2', cfg.body.config_id],
    ]);
    const tooMany = await call(
      'POST',
      '/scores',
      Array.from({ length: 1_001 }, (_x, i) => ({ trace_id: 't', name: 'n', value: i })),
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toBe('Invalid body: scores: must NOT have more than 1000 items');
  });

  it("a batch's schema problems name the item as its other problems do, in words", async () => {
    const schema = await call('POST', '/scores', [
      { trace_id: 't', name: 'n', value: 1 },
      { trace_id: 't', name: 5, value: null, colour: 'red' },
    ]);
    expect([schema.status, schema.body]).toEqual([
      400,
      {
        detail:
          'Invalid body: scores[1].colour: unknown field; scores[1].name: must be string; scores[1].value: must be a number, true or false, or a string',
      },
    ]);
    const one = await call('POST', '/scores', { trace_id: 't', name: 'n', value: [1] });
    expect(one.body).toEqual({ detail: 'Invalid body: value: must be a number, true or false, or a string' });
    const neither = await call('POST', '/scores', 5);
    expect(neither.body).toEqual({ detail: 'Invalid body: body: must be an object or an array' });
    // A wrong type for a name with a config: 422 naming the item, the field and the config.
    const typed = await call('POST', '/scores', [
      { trace_id: 't', name: 'n', value: 1 },
      { trace_id: 't', name: 'accuracy', value: 'good' },
    ]);
    expect([typed.status, typed.body]).toEqual([
      422,
      { detail: 'scores[1].value: a NUMERIC score needs a number, got "good" (score config "accuracy")' },
    ]);
  });

  it('bad input: no target, unknown data type, a label for a NUMERIC config, Infinity, a long name', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ name: 'n', value: 1 }, 400, /^trace_id: a score needs a trace_id or a session_id$/],
      [{ trace_id: 't', name: 'n', value: 1, data_type: 'PERCENT' }, 400, /data_type: must be one of/],
      [
        { trace_id: 't', name: 'accuracy', value: 'good' },
        422,
        /^value: a NUMERIC score needs a number, got "good" \(score config "accuracy"\)$/,
      ],
      [{ trace_id: 't', name: 'accuracy', value: true, data_type: 'BOOLEAN' }, 422, /^data_type: the score config "accuracy" says NUMERIC/],
      [{ trace_id: 't', name: 'n'.repeat(201), value: 1 }, 400, /name: must NOT have more than 200 characters/],
      [{ span_id: 's', session_id: 'x', name: 'n', value: 1 }, 400, /^span_id: a span's score needs its trace_id$/],
    ];
    for (const [body, status, detail] of cases) {
      const r = await call('POST', '/scores', body);
      expect([r.status, r.body.detail], JSON.stringify(body)).toEqual([status, expect.stringMatching(detail)]);
    }
    const inf = await call('POST', '/scores', '{"trace_id":"t","name":"n","value":1e400}');
    expect(inf.status).toBe(400);
    expect(inf.body.detail).toMatch(/^Invalid body: value: /);
  });

  it('configs: categories and booleans checked; the rule never changes under scores; archived configs hold no one', async () => {
    const mood = await call('POST', '/score-configs', { name: 'mood', data_type: 'CATEGORICAL', categories: ['good', 'bad'] });
    expect(mood.status).toBe(201);
    expect((await call('POST', '/score-configs', { name: 'mood', data_type: 'NUMERIC' })).status).toBe(409);
    expect((await call('POST', '/score-configs', { name: 'r', data_type: 'BOOLEAN', min_value: 0 })).status).toBe(422);
    const off = await call('POST', '/scores', { trace_id: 't-mood', name: 'mood', value: 'ugly' });
    expect(off.status).toBe(422);
    expect(off.body.detail).toBe('value: "ugly" is not a category of the score config "mood" ("good", "bad")');
    expect((await call('POST', '/scores', { trace_id: 't-mood', name: 'mood', value: 'good' })).body).toMatchObject({
      data_type: 'CATEGORICAL',
      value: 'good',
    });
    const changed = await call('PUT', `/score-configs/${mood.body.config_id}`, { categories: ['good', 'bad', 'ugly'] });
    expect(changed.status).toBe(409);
    expect(changed.body.detail).toMatch(/^categories: a score config's categories cannot change under its scores/);
    const archived = await call('PUT', `/score-configs/${mood.body.config_id}`, { archived: true, description: 'old' });
    expect(archived.body).toMatchObject({ archived: true, description: 'old', categories: ['good', 'bad'] });
    expect((await call('GET', '/score-configs')).body.items.map((c: { name: string }) => c.name)).not.toContain('mood');
    expect((await call('GET', '/score-configs?include_archived=true')).body.items.map((c: { name: string }) => c.name)).toContain('mood');
    expect((await call('POST', '/scores', { trace_id: 't-mood', name: 'mood', value: 'ugly' })).status).toBe(201);
    const bool = await call('POST', '/score-configs', { name: 'resolved', data_type: 'BOOLEAN' });
    expect(bool.status).toBe(201);
    expect((await call('POST', '/scores', { trace_id: 't-b', name: 'resolved', value: 1 })).body).toMatchObject({ value: true });
    expect((await call('POST', '/scores', { trace_id: 't-b', name: 'resolved', value: 'yes' })).status).toBe(422);
    expect((await call('GET', `/score-configs/${bool.body.config_id}`)).body).toMatchObject({ name: 'resolved', data_type: 'BOOLEAN' });
    expect((await call('GET', '/score-configs/not-a-uuid')).status).toBe(404);
  });

  it('a score sent before its trace joins the execution once assembled; a delete drops it at once', async () => {
    const traceId = (0x5c0001).toString(16).padStart(32, '0');
    const s = await call('POST', '/scores', { id: 'early', trace_id: traceId, name: 'helpfulness', value: 0.7, source: 'annotation' });
    expect(s.status).toBe(201);
    const sent = await fetch(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ spans: agentTrace(0x5c0001) }),
    });
    expect(sent.status).toBe(200);
    const e = await until(async () => {
      const r = await call('GET', `/executions/${traceId}`);
      return r.status === 200 ? r.body : undefined;
    }, 'the execution');
    expect(e.scores).toEqual([expect.objectContaining({ id: 'early', value: 0.7, source: 'annotation', author: 'dev' })]);
    const span = await call('POST', '/scores', {
      id: 'on-span',
      trace_id: traceId,
      span_id: (0x5c0001 * 2 + 2).toString(16).padStart(16, '0'),
      name: 'ok',
      value: true,
    });
    expect(span.status).toBe(201);
    expect((await call('GET', `/executions/${traceId}`)).body.scores.map((x: { id: string }) => x.id)).toEqual(['early', 'on-span']);
    expect((await call('DELETE', '/scores/early')).status).toBe(204);
    expect((await call('DELETE', '/scores/early')).status).toBe(404);
    expect((await call('GET', '/scores/early')).status).toBe(404);
    expect((await call('GET', `/executions/${traceId}`)).body.scores.map((x: { id: string }) => x.id)).toEqual(['on-span']);
    // A session's score.
    expect((await call('POST', '/scores', { session_id: 'sess-1', name: 'csat', value: 4 })).body).toMatchObject({
      trace_id: null,
      session_id: 'sess-1',
    });
    expect((await call('GET', '/scores?session_id=sess-1')).body.items).toHaveLength(1);
  });

  it('lists with filters and keyset pages', async () => {
    for (let i = 0; i < 5; i++)
      expect(
        (await call('POST', '/scores', { id: `page-${i}`, trace_id: `tp-${i}`, name: 'paging', value: i, source: 'eval' })).status,
      ).toBe(201);
    const first = await call('GET', '/scores?name=paging&limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await call('GET', `/scores?name=paging&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const third = await call('GET', `/scores?name=paging&limit=2&cursor=${second.body.next_cursor}`);
    const ids = [...first.body.items, ...second.body.items, ...third.body.items].map((s: { id: string }) => s.id);
    expect(new Set(ids).size).toBe(5);
    expect(third.body.next_cursor).toBeNull();
    expect((await call('GET', '/scores?name=paging&min_value=1&max_value=3')).body.items).toHaveLength(3);
    expect((await call('GET', '/scores?name=paging&source=api')).body.items).toHaveLength(0);
    expect((await call('GET', '/scores?cursor=nonsense')).status).toBe(400);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect((await call('GET', `/scores?name=paging&start=${hourAgo}`)).body.items).toHaveLength(5);
    expect((await call('GET', `/scores?name=paging&end=${hourAgo}`)).body.items).toHaveLength(0);
  });

  it('filter the executions list and export: score.<name>.gte|lte|eq and has_score, exact through a delete', async () => {
    for (const id of ['f-1', 'f-2', 'f-3'])
      expect((await call('POST', '/executions', { trace_id: id, agent_id: 'scored-agent' })).status).toBe(201);
    expect(
      (
        await call('POST', '/scores', [
          { id: 'f-1-acc', trace_id: 'f-1', name: 'fidelity', value: 0.9 },
          { id: 'f-2-acc', trace_id: 'f-2', name: 'fidelity', value: 0.3 },
          { id: 'f-1-tone', trace_id: 'f-1', name: 'tone', value: 'warm' },
          { id: 'f-3-ok', trace_id: 'f-3', name: 'passed', value: false },
        ])
      ).status,
    ).toBe(201);
    const ids = async (q: string) => {
      const r = await call('GET', `/executions?agent_id=scored-agent&${q}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.items.map((e: { trace_id: string }) => e.trace_id).sort();
    };
    expect(await ids('score.fidelity.gte=0.5')).toEqual(['f-1']);
    expect(await ids('score.fidelity.lte=0.5')).toEqual(['f-2']);
    expect(await ids('score.fidelity.gte=0.2&score.fidelity.lte=0.5')).toEqual(['f-2']);
    expect(await ids('has_score=fidelity')).toEqual(['f-1', 'f-2']);
    expect(await ids('has_score=fidelity&has_score=tone')).toEqual(['f-1']);
    expect(await ids('score.tone.eq=warm')).toEqual(['f-1']);
    expect(await ids('score.fidelity.eq=0.3')).toEqual(['f-2']);
    expect(await ids('score.passed.eq=false')).toEqual(['f-3']);
    const total = await call('GET', '/executions?agent_id=scored-agent&score.fidelity.gte=0');
    expect(total.body.total).toBe(2);
    const bad = await call('GET', '/executions?score.fidelity.gte=high');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toBe('score.fidelity.gte: must be a number, got "high"');
    const exported = await fetch(
      `${svc.url}/api/projects/default/executions/export?format=jsonl&agent_id=scored-agent&score.fidelity.gte=0.5`,
    );
    expect(
      (await exported.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).trace_id),
    ).toEqual(['f-1']);
    expect((await call('DELETE', '/scores/f-1-acc')).status).toBe(204);
    expect(await ids('score.fidelity.gte=0.5')).toEqual([]);
    expect(await ids('has_score=fidelity')).toEqual(['f-2']);
  });

  it('spend breakdowns carry score means, true-rates and label counts per group, exact through an update and a delete', async () => {
    const rows: Array<[string, string, number, number, boolean, string]> = [
      // trace, model, cost, accuracy, passed, tone
      ['sb-1', 'model-a', 0.5, 0.9, true, 'warm'],
      ['sb-2', 'model-a', 0.25, 0.7, false, 'cold'],
      ['sb-3', 'model-b', 0.125, 0.4, true, 'warm'],
      ['sb-4', 'model-c', 0.0625, 0.2, false, 'warm'],
    ];
    for (const [trace, model, cost] of rows)
      expect((await call('POST', '/executions', { trace_id: trace, model, cost_usd: cost, agent_id: 'sb-agent' })).status).toBe(201);
    expect(
      (
        await call(
          'POST',
          '/scores',
          rows.flatMap(([trace, , , accuracy, passed, tone]) => [
            { id: `${trace}-acc`, trace_id: trace, name: 'sb-accuracy', value: accuracy },
            { id: `${trace}-ok`, trace_id: trace, name: 'sb-passed', value: passed },
            { id: `${trace}-tone`, trace_id: trace, name: 'sb-tone', value: tone },
          ]),
        )
      ).status,
    ).toBe(201);
    const spend = async (q = '') => {
      const r = await call('GET', `/spend?group_by=model&agent_id=sb-agent&scores=sb-accuracy,sb-passed,sb-tone${q}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const body = await until(async () => {
      const b = await spend();
      return b.rows.length === 3 ? b : undefined;
    }, 'the breakdown');
    const a = body.rows.find((r: { model: string }) => r.model === 'model-a');
    expect(a).toMatchObject({ cost_usd: '0.75', executions: 2 });
    expect(a.scores).toEqual({
      'sb-accuracy': { data_type: 'NUMERIC', scored_executions: 2, n: 2, mean: 0.8 },
      'sb-passed': { data_type: 'BOOLEAN', scored_executions: 2, n: 2, true_rate: 0.5 },
      'sb-tone': { data_type: 'CATEGORICAL', scored_executions: 2, n: 2, labels: { cold: 1, warm: 1 } },
    });
    expect(body.total_scores['sb-accuracy']).toEqual({ data_type: 'NUMERIC', scored_executions: 4, n: 4, mean: 0.55 });
    // Updated and deleted: the means move at once.
    expect((await call('POST', '/scores', { id: 'sb-2-acc', trace_id: 'sb-2', name: 'sb-accuracy', value: 0.3 })).status).toBe(201);
    expect((await call('DELETE', '/scores/sb-1-ok')).status).toBe(204);
    const after = await spend();
    const a2 = after.rows.find((r: { model: string }) => r.model === 'model-a');
    expect(a2.scores['sb-accuracy']).toEqual({ data_type: 'NUMERIC', scored_executions: 2, n: 2, mean: 0.6 });
    expect(a2.scores['sb-passed']).toEqual({ data_type: 'BOOLEAN', scored_executions: 1, n: 1, true_rate: 0 });
    // The other row adds up the groups not shown.
    const top = await spend('&limit=1');
    expect(top.rows.map((r: { model: string }) => r.model)).toEqual(['model-a']);
    expect(top.other.scores['sb-accuracy']).toEqual({ data_type: 'NUMERIC', scored_executions: 2, n: 2, mean: 0.3 });
    expect(top.other.scores['sb-tone']).toEqual({ data_type: 'CATEGORICAL', scored_executions: 2, n: 2, labels: { warm: 2 } });
    // Time buckets key scores as they key spend.
    const byDay = (await call('GET', '/spend?group_by=day&agent_id=sb-agent&scores=sb-accuracy')).body;
    expect(byDay.rows).toHaveLength(1);
    expect(byDay.rows[0].scores['sb-accuracy']).toMatchObject({ n: 4, scored_executions: 4 });
    // Spend itself is unchanged by scores.
    expect(top.total).toMatchObject({ cost_usd: '0.9375', executions: 4 });
    const many = await call('GET', `/spend?scores=${Array.from({ length: 21 }, (_x, i) => `s${i}`).join(',')}`);
    expect([many.status, many.body.detail]).toEqual([400, 'scores: at most 20 score names, got 21']);
  });
});
