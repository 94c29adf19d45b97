// Release gates on prompt labels (docs/prompts.md, "Release gates"): fixed experiment data — a
// dataset of 20 items, one run per prompt version with linked executions (costs) and scores —
// where version 2 regresses a boolean and a numeric score significantly and costs more, version 3
// is better. The gate refuses 2 naming each failed condition and accepts 3 once another admin
// approved it; the p-values of the check are computed here independently (McNemar's exact p from
// binomial coefficients in BigInt, the paired t-test's p by integrating Student's density). Every
// path that moves a label goes through the gate; every move, approval and override is listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { binomial, twoSidedP } from '../helpers/independent-statistics.ts';

const idp = new TestIdp();
let svc: TestService;
const PROJECT = 'gates';
const tokens = { author: '', approver: '' };
let memberKey = '';

beforeAll(async () => {
  await idp.start();
  svc = await startTestService(idp.env({ AUTH_REQUIRED: 'true' }));
  tokens.author = await idp.token({ sub: 'alice', project_id: PROJECT, role: 'admin' });
  tokens.approver = await idp.token({ sub: 'bob', project_id: PROJECT, role: 'admin' });
  const key = await as('author')('POST', '/api-keys', { name: 'member key' });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  memberKey = key.body.key;
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

type Who = keyof typeof tokens | 'member';
const as =
  (who: Who) =>
  (method: string, path: string, body?: unknown): ReturnType<typeof getJson> =>
    getJson(`${svc.url}/api/projects/${PROJECT}${path}`, {
      method,
      headers: {
        ...(who === 'member' ? { 'X-API-Key': memberKey } : { Authorization: `Bearer ${tokens[who]}` }),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
const alice = as('author');
const bob = as('approver');

// ---- Independent statistics -------------------------------------------------------------------

/** McNemar's exact two-sided p: 2·P(X ≤ min(a_only, b_only)) for X ~ Binomial(a_only + b_only, ½), capped at 1. */
function mcNemarP(aOnly: number, bOnly: number): number {
  const n = aOnly + bOnly;
  let tail = 0n;
  for (let k = 0; k <= Math.min(aOnly, bOnly); k++) tail += binomial(n, k);
  return Math.min(1, (2 * Number(tail)) / 2 ** n);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
function pairedT(a: number[], b: number[]) {
  const d = b.map((x, i) => x - a[i]!);
  const m = mean(d);
  const sd = Math.sqrt(d.reduce((s, x) => s + (x - m) ** 2, 0) / (d.length - 1));
  const t = m / (sd / Math.sqrt(d.length));
  return { difference: m, t, p: twoSidedP(t, d.length - 1) };
}

// ---- The experiment: 20 items, versions 1 (in production), 2 (worse), 3 (better) ------------------

const N = 20;
const ITEMS = Array.from({ length: N }, (_x, i) => i);
const baseQuality = ITEMS.map((i) => 0.6 + ((i * 7) % 10) / 50); // 0.60 … 0.78
const data = {
  // v1: right on items 0..17
  1: { correct: (i: number) => i < 18, quality: baseQuality, costUsd: 0.001 },
  // v2: right on items 0..7 only (10 pairs right under v1 only), quality 0.08 lower with noise, 20 % dearer
  2: { correct: (i: number) => i < 8, quality: baseQuality.map((q, i) => q - 0.08 + (i % 3) * 0.01), costUsd: 0.0012 },
  // v3: right on every item (2 pairs right under v3 only), quality 0.03 higher with noise, 5 % dearer
  3: { correct: () => true, quality: baseQuality.map((q, i) => q + 0.03 - (i % 2) * 0.01), costUsd: 0.00105 },
} as const;

let datasetId = '';
const runIds: Record<number, string> = {};

async function recordRun(itemIds: string[], version: 1 | 2 | 3) {
  const d = data[version];
  const run = await alice('POST', `/datasets/${datasetId}/runs`, { name: `v${version}`, prompts: [{ prompt_id: 'support', version }] });
  expect(run.status, JSON.stringify(run.body)).toBe(201);
  runIds[version] = run.body.run_id;
  for (const i of ITEMS) {
    const trace = `gate-v${version}-${i}`;
    const rec = await alice('POST', '/executions', { trace_id: trace, model: 'gpt-4o', cost_usd: d.costUsd, latency_ms: 500 + i });
    expect(rec.status, JSON.stringify(rec.body)).toBe(201);
  }
  const scores = ITEMS.flatMap((i) => [
    { trace_id: `gate-v${version}-${i}`, name: 'correct', value: d.correct(i), data_type: 'BOOLEAN' },
    { trace_id: `gate-v${version}-${i}`, name: 'quality', value: d.quality[i] },
  ]);
  expect((await alice('POST', '/scores', scores)).status).toBe(201);
  const linked = await alice(
    'POST',
    `/datasets/${datasetId}/runs/${run.body.run_id}/items`,
    ITEMS.map((i) => ({ item_id: itemIds[i], trace_id: `gate-v${version}-${i}` })),
  );
  expect(linked.body).toEqual({ linked: N });
  await until(async () => {
    const r = await alice('GET', `/datasets/${datasetId}/runs/${run.body.run_id}`);
    return r.status === 200 && r.body.totals.items.awaiting_execution === 0 && r.body.totals.scores.quality?.n === N;
  }, `run of version ${version} joined to its executions and scores`);
}

const condition = (check: { conditions: Array<{ condition: string; score?: string }> }, name: string, score?: string) =>
  check.conditions.find((c) => c.condition === name && c.score === score) as unknown as { status: string; detail: string; figures: any };

describe(`release gates on prompt labels (${mode} mode)`, () => {
  it('builds the prompt, its versions and one run per version', async () => {
    expect(
      (await alice('POST', '/prompts', { prompt_id: 'support', type: 'text', template: 'v1 {{q}}', labels: ['production'] })).status,
    ).toBe(201);
    expect((await alice('POST', '/prompts/support/versions', { template: 'v2 {{q}}' })).status).toBe(201);
    expect((await alice('POST', '/prompts/support/versions', { template: 'v3 {{q}}' })).status).toBe(201);
    const ds = await alice('POST', '/datasets', { name: 'support-golden' });
    datasetId = ds.body.dataset_id;
    const items = await alice(
      'POST',
      `/datasets/${datasetId}/items`,
      ITEMS.map((i) => ({ input: { q: `question ${i}` } })),
    );
    const itemIds = (items.body.items as Array<{ item_id: string }>).map((x) => x.item_id);
    for (const v of [1, 2, 3] as const) await recordRun(itemIds, v);
  });

  it('only an admin sets a gate; its config is validated and read back', async () => {
    const body = { dataset_id: datasetId, scores: ['correct', 'quality'], max_cost_increase_pct: 10, require_approval: true };
    expect((await as('member')('PUT', '/prompts/support/labels/production/gate', body)).status).toBe(403);
    const stray = await alice('PUT', '/prompts/support/labels/production/gate', { ...body, lower_is_better: ['latency'] });
    expect(stray).toMatchObject({ status: 422, body: { detail: 'lower_is_better: latency not in scores' } });
    const noDataset = await alice('PUT', '/prompts/support/labels/production/gate', {
      ...body,
      dataset_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(noDataset).toMatchObject({
      status: 422,
      body: { detail: 'dataset_id: no dataset 00000000-0000-4000-8000-000000000000 in this project' },
    });
    expect((await alice('GET', '/prompts/support/labels/production/gate')).status).toBe(404);
    expect((await alice('GET', '/prompts/support/gates')).body).toEqual({ items: [] });
    expect((await alice('GET', '/prompts/no-such-prompt/gates')).status).toBe(404);
    const set = await alice('PUT', '/prompts/support/labels/production/gate', body);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ ...body, label: 'production', alpha: 0.05, lower_is_better: [], updated_by: 'alice' });
    expect((await as('member')('GET', '/prompts/support/labels/production/gate')).body).toEqual(set.body);
    expect((await as('member')('GET', '/prompts/support/gates')).body).toEqual({ items: [set.body] });
  });

  it('the check of version 2 fails on both scores and the cost, with figures equal to values computed here', async () => {
    const r = await as('member')('GET', '/prompts/support/labels/production/gate/check?version=2');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      version: 2,
      current_version: 1,
      passed: false,
      evidence: { candidate_run: { run_id: runIds[2], name: 'v2' }, current_run: { run_id: runIds[1], name: 'v1' } },
    });
    // correct: 10 items right under v1 only, none under v2 only.
    const correct = condition(r.body, 'score', 'correct');
    expect(correct.status).toBe('failed');
    expect(correct.figures).toMatchObject({
      test: 'mcnemar_exact',
      n_paired: 20,
      rate_current: 0.9,
      rate_candidate: 0.4,
      worse: true,
      significant: true,
    });
    expect(correct.figures.p_value).toBeCloseTo(mcNemarP(10, 0), 12);
    expect(mcNemarP(10, 0)).toBeCloseTo(2 / 1024, 15);
    expect(correct.detail).toMatch(
      /^score correct regressed significantly: rate 0\.9 → 0\.4 \(difference -0\.5, McNemar's exact test p = 0\.002 < alpha 0\.05\)$/,
    );
    // quality: the paired t-test of v2 − v1 over the 20 items.
    const expected = pairedT([...data[1].quality], [...data[2].quality]);
    const quality = condition(r.body, 'score', 'quality');
    expect(quality.status).toBe('failed');
    expect(quality.figures).toMatchObject({ test: 'paired_t', n_paired: 20, worse: true, significant: true });
    expect(quality.figures.difference).toBeCloseTo(expected.difference, 6);
    expect(quality.figures.p_value).toBeCloseTo(expected.p, 9);
    expect(expected.p).toBeLessThan(0.05);
    // cost: $0.0012 against $0.001 per item, 20 % over a bound of 10 %.
    const cost = condition(r.body, 'cost');
    expect(cost.status).toBe('failed');
    expect(cost.figures).toMatchObject({
      mean_cost_current_usd: 0.001,
      mean_cost_candidate_usd: 0.0012,
      items_current: 20,
      items_candidate: 20,
    });
    expect(cost.figures.increase_pct).toBeCloseTo(20, 6);
    expect(condition(r.body, 'approval')).toMatchObject({ status: 'failed', figures: { approved_by: [] } });
  });

  it('a direct PUT of version 2 is refused with a detail naming each failed condition; the label stays', async () => {
    const r = await bob('PUT', '/prompts/support/labels/production', { version: 2 });
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/^The release gate of label production refuses version 2: score correct regressed significantly/);
    expect(r.body.detail).toContain('score quality regressed significantly');
    expect(r.body.detail).toContain('cost per item rose 20 %');
    expect(r.body.detail).toContain('approval: version 2 needs the approval of an admin other than its author');
    expect((await alice('GET', '/prompts/support')).body.labels).toEqual({ production: 1 });
  });

  it('version 3 passes every measured condition and moves once an admin other than its author approved it', async () => {
    const check = (await alice('GET', '/prompts/support/labels/production/gate/check?version=3')).body;
    const expected = pairedT([...data[1].quality], [...data[3].quality]);
    expect(condition(check, 'score', 'correct')).toMatchObject({ status: 'passed', figures: { worse: false, rate_candidate: 1 } });
    expect(condition(check, 'score', 'correct').figures.p_value).toBeCloseTo(mcNemarP(0, 2), 12);
    expect(condition(check, 'score', 'quality').figures.p_value).toBeCloseTo(expected.p, 9);
    expect(condition(check, 'score', 'quality').figures.difference).toBeGreaterThan(0);
    expect(condition(check, 'cost').status).toBe('passed');
    expect(condition(check, 'cost').figures.increase_pct).toBeCloseTo(5, 6);
    expect(check.passed).toBe(false);

    const refused = await alice('PUT', '/prompts/support/labels/production', { version: 3 });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        detail: expect.stringMatching(/refuses version 3: approval: version 3 needs the approval of an admin other than its author/),
      },
    });
    // alice wrote version 3: she cannot approve it; a member cannot approve at all.
    const own = await alice('POST', '/prompts/support/labels/production/approvals', { version: 3 });
    expect(own).toMatchObject({
      status: 403,
      body: { detail: 'approval: alice wrote version 3; an admin other than its author approves it' },
    });
    expect((await as('member')('POST', '/prompts/support/labels/production/approvals', { version: 3 })).status).toBe(403);
    const approved = await bob('POST', '/prompts/support/labels/production/approvals', { version: 3, comment: 'looks right' });
    expect(approved).toMatchObject({ status: 201, body: { version: 3, approved_by: 'bob', comment: 'looks right' } });
    expect((await bob('POST', '/prompts/support/labels/production/approvals', { version: 3 })).status).toBe(409);

    const moved = await alice('PUT', '/prompts/support/labels/production', { version: 3, reason: 'v3 wins the golden set' });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ prompt_id: 'support', label: 'production', version: 3, overridden: false, gate: { passed: true } });
    expect((await alice('GET', '/prompts/support/versions/production')).body.version).toBe(3);
  });

  it('the gate run can be named; a run that does not name the version fails the evidence condition', async () => {
    const named = await alice('GET', `/prompts/support/labels/production/gate/check?version=2&gate_run_id=${runIds[1]}`);
    expect(condition(named.body, 'evidence_candidate')).toMatchObject({
      status: 'failed',
      detail: `gate_run_id: no run ${runIds[1]} of dataset ${datasetId} naming prompt support version 2`,
    });
    expect(condition(named.body, 'score', 'correct').status).toBe('not_evaluated');
  });

  it('no path moves a protected label past its gate: new version, rollback, removal; a version without evidence', async () => {
    const before = (await alice('GET', '/prompts/support')).body.latest_version;
    const withLabel = await alice('POST', '/prompts/support/versions', { template: 'v4 {{q}}', labels: ['production'] });
    expect(withLabel.status).toBe(409);
    expect(withLabel.body.detail).toMatch(/^labels: Label production is protected by a release gate/);
    const rollback = await alice('POST', '/prompts/support/rollback', { version: 1, labels: ['production'] });
    expect(rollback.status).toBe(409);
    expect(rollback.body.detail).toMatch(/^labels: Label production is protected by a release gate/);
    expect((await alice('GET', '/prompts/support')).body).toMatchObject({ latest_version: before, labels: { production: 3 } });
    expect((await alice('DELETE', '/prompts/support/labels/production')).status).toBe(409);
    // A rollback without the label appends a version; moving the label onto it needs evidence of its own.
    const v = (await alice('POST', '/prompts/support/rollback', { version: 1 })).body.version;
    const put = await bob('PUT', '/prompts/support/labels/production', { version: v });
    expect(put.status).toBe(409);
    expect(put.body.detail).toContain(`no run of dataset ${datasetId} names prompt support version ${v}`);
    expect((await alice('GET', '/prompts/support')).body.labels).toEqual({ production: 3 });
  });

  it('an override needs an admin and a reason, and is recorded', async () => {
    expect((await as('member')('PUT', '/prompts/support/labels/production', { version: 2, override: true, reason: 'x' })).status).toBe(403);
    const noReason = await bob('PUT', '/prompts/support/labels/production', { version: 2, override: true });
    expect(noReason).toMatchObject({ status: 400, body: { detail: 'reason: an override needs a reason' } });
    const r = await bob('PUT', '/prompts/support/labels/production', {
      version: 2,
      override: true,
      reason: 'incident 42: v3 breaks tool calls',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ version: 2, overridden: true, gate: { passed: false } });
  });

  it('a protected label that points nowhere needs evidence for the candidate only', async () => {
    expect((await alice('PUT', '/prompts/support/labels/staging/gate', { dataset_id: datasetId, scores: ['correct'] })).status).toBe(200);
    const check = (await alice('GET', '/prompts/support/labels/staging/gate/check?version=2')).body;
    expect(check).toMatchObject({ current_version: null, passed: true });
    expect(condition(check, 'score', 'correct').status).toBe('not_applicable');
    expect((await alice('PUT', '/prompts/support/labels/staging', { version: 2 })).body).toMatchObject({ version: 2, overridden: false });
    // Now it holds version 2: version 3 is compared with it (and is better).
    expect((await alice('PUT', '/prompts/support/labels/staging', { version: 3 })).status).toBe(200);
    expect((await alice('PUT', '/prompts/support/labels/staging', { version: 2 })).status).toBe(409);
  });

  it('every move, approval, override and gate change is listed, newest first, a page at a time', async () => {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof getJson>> = await as('member')(
        'GET',
        `/prompts/support/label-events?label=production&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.map((e) => [e.action, e.from_version, e.to_version, e.actor])).toEqual([
      ['overridden', 3, 2, 'bob'],
      ['moved', 1, 3, 'alice'],
      ['approved', 1, 3, 'bob'],
      ['gate_set', 1, 1, 'alice'],
      ['moved', null, 1, 'alice'],
    ]);
    const [override, move, approval] = seen;
    expect(override).toMatchObject({ reason: 'incident 42: v3 breaks tool calls', api_key_id: null, details: { passed: false } });
    expect(
      override.details.conditions.some((c: { score?: string; status: string }) => c.score === 'correct' && c.status === 'failed'),
    ).toBe(true);
    expect(move).toMatchObject({ reason: 'v3 wins the golden set', details: { passed: true } });
    expect(approval.reason).toBe('looks right');
    const all = (await alice('GET', '/prompts/support/label-events?limit=100')).body.items;
    expect(all.filter((e: { label: string }) => e.label === 'staging').map((e: { action: string }) => e.action)).toEqual([
      'moved',
      'moved',
      'gate_set',
    ]);
    expect((await alice('GET', '/prompts/support/label-events?cursor=nope')).status).toBe(400);
    expect((await alice('GET', '/prompts/nothing/label-events')).status).toBe(404);
  });

  it('an unprotected label moves and is removed freely, and both are recorded; removing the gate frees the label', async () => {
    expect((await as('member')('PUT', '/prompts/support/labels/canary', { version: 3, reason: 'try it' })).body).toEqual({
      prompt_id: 'support',
      label: 'canary',
      version: 3,
    });
    expect((await as('member')('PUT', '/prompts/support/labels/canary', { version: 3, override: true, reason: 'x' })).status).toBe(403);
    expect((await alice('PUT', '/prompts/support/labels/canary', { version: 3, override: true, reason: 'x' })).status).toBe(422);
    expect((await as('member')('DELETE', '/prompts/support/labels/canary')).status).toBe(204);
    expect((await as('member')('DELETE', '/prompts/support/labels/production/gate')).status).toBe(403);
    expect((await alice('DELETE', '/prompts/support/labels/production/gate')).status).toBe(204);
    expect((await alice('DELETE', '/prompts/support/labels/production/gate')).status).toBe(404);
    expect((await as('member')('PUT', '/prompts/support/labels/production', { version: 1 })).status).toBe(200);
    const events = (await alice('GET', '/prompts/support/label-events?limit=4')).body.items;
    expect(events.map((e: { label: string; action: string }) => `${e.label} ${e.action}`)).toEqual([
      'production moved',
      'production gate_removed',
      'canary removed',
      'canary moved',
    ]);
    expect(events[3]).toMatchObject({ reason: 'try it', actor: expect.stringMatching(/^api_key:/), api_key_id: expect.any(String) });
  });
});
