// Experiments run by the service (docs/datasets.md, "Experiments run by the service"), end to end
// against OpenAI-compatible servers on loopback (test/helpers/fake-judge.ts): a model that doubles
// the number it is asked about (slow, rate-limited or failing on demand) and a judge that scores
// 1 when the answer is the expected output. Every call is priced from the price table, so what an
// experiment spent is checked to the nano-dollar; every model and judge request is counted, so
// "never twice" is checked across a restart.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, testEnv, type TestEnv } from '../helpers/env.ts';
import { jsonCaller, startTestService, type TestService } from '../helpers/service.ts';
import { connectJudge, startFakeJudge, verdict, type FakeJudge, type JudgeReply } from '../helpers/fake-judge.ts';
import { until } from '../helpers/wait.ts';

/** Background work on a loaded 2-core machine: generous bounds (they bound a hang, they time nothing). */
const WAIT_MS = 120_000;
const TEST_MS = 240_000;

let env: TestEnv;
let svc: TestService;
let model: FakeJudge;
let judge: FakeJudge;
const ids: Record<string, string> = {};
const call = jsonCaller(() => `${svc.url}/api/projects/default`);
/** Per tag, how the model behaves: a delay for every call. */
const delays = new Map<string, number>();
/** Per question, how many times the model was asked (a 429 the first time for "flaky" ones). */
const asked = new Map<string, number>();

// Prices: the model 2.5 / 10 USD per million tokens, 1,000 in and 100 out per call → $0.0035 a call;
// the judge 1 / 2, 100 in and 20 out → $0.00014 a judgement.
const MODEL_CALL_NANOS = 3_500_000n;
const JUDGE_CALL_NANOS = 140_000n;
const usd = (nanos: bigint) => {
  const s = nanos.toString().padStart(10, '0');
  return `${s.slice(0, -9)}.${s.slice(-9)}`.replace(/\.?0+$/, '');
};

function modelScript(text: string): JudgeReply {
  const q = /\[(\w+)] n=(-?\d+)/.exec(text);
  const tag = q?.[1] ?? '';
  const key = `${tag}:${q?.[2]}`;
  const n = (asked.get(key) ?? 0) + 1;
  asked.set(key, n);
  if (text.includes('flaky') && n === 1) return { kind: 'status', status: 429, message: 'slow down' };
  if (text.includes('broken')) return { kind: 'status', status: 500, message: 'the model is down' };
  const answer = tag === 'json' ? JSON.stringify({ value: Number(q?.[2]) * 2 }) : String(Number(q?.[2]) * 2);
  return { kind: 'judgement', content: answer, promptTokens: 1_000, completionTokens: 100, delayMs: delays.get(tag) ?? 0 };
}

function judgeScript(text: string): JudgeReply {
  const m = /Answer: (.*)\nExpected: (.*)/.exec(text);
  return { ...verdict(m && m[1] === m[2] ? 1 : 0), promptTokens: 100, completionTokens: 20 };
}

/** Requests that carry this tag (the model's prompt and the judge's transcript both name it). */
const seen = (server: FakeJudge, tag: string) => server.requests.filter((r) => r.text.includes(`[${tag}] `));

/** A dataset of `n` items {n, tag: name, note}: the tag marks every model and judge request of its experiments. */
async function dataset(name: string, n: number, expected: (i: number) => unknown = (i) => String(i * 2), note = (_i: number) => '') {
  const ds = await call('POST', '/datasets', { name });
  expect(ds.status, JSON.stringify(ds.body)).toBe(201);
  const items = Array.from({ length: n }, (_, k) => ({
    input: { n: k + 1, tag: name, note: note(k + 1) },
    expected_output: expected(k + 1),
  }));
  const r = await call('POST', `/datasets/${ds.body.dataset_id}/items`, items);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return ds.body.dataset_id as string;
}

async function start(datasetId: string, body: Record<string, unknown>) {
  const r = await call('POST', `/datasets/${datasetId}/experiments`, {
    prompt: { prompt_id: 'doubler', version: 'production' },
    connection_id: ids.model,
    ...body,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body as { experiment_id: string; run_id: string };
}

const experiment = async (datasetId: string, id: string) => (await call('GET', `/datasets/${datasetId}/experiments/${id}`)).body;
const ended = (datasetId: string, id: string, what: string) =>
  until(
    async () => {
      const e = await experiment(datasetId, id);
      return !['queued', 'running'].includes(e.status) && e;
    },
    what,
    WAIT_MS,
  );

async function boot() {
  svc = await startTestService({}, { env });
}

beforeAll(async () => {
  model = await startFakeJudge((req) => modelScript(req.text), 'exp-model');
  judge = await startFakeJudge((req) => judgeScript(req.text), 'judge-model');
  env = await testEnv({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the models are on loopback
    EXPERIMENT_SCAN_INTERVAL_MS: '200',
    EXPERIMENT_LEASE_MS: '3000',
    EXPERIMENT_BACKOFF_MS: '20',
    EVALUATOR_BACKOFF_MS: '20',
    SECRETS_KEY: mode === 'server' ? crypto.randomBytes(32).toString('hex') : undefined,
  });
  await boot();
  for (const [m, input, output] of [
    ['exp-model', 2.5, 10],
    ['judge-model', 1, 2],
  ] as const)
    expect((await call('PUT', `/models/${m}`, { provider: 'openai', input_per_mtok: input, output_per_mtok: output })).status).toBeLessThan(
      300,
    );
  // Version 1 asks plainly; version 2 (production) adds the tag and the note; version 3 asks for JSON.
  let r = await call('POST', '/prompts', { prompt_id: 'doubler', type: 'text', template: 'Double [{{tag}}] n={{n}}' });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  r = await call('POST', '/prompts/doubler/versions', { template: 'Double [{{tag}}] n={{n}} {{note}}', labels: ['production'] });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  r = await call('POST', '/prompts', {
    prompt_id: 'match-judge',
    type: 'text',
    template: 'Judge {{input}}\nAnswer: {{output}}\nExpected: {{expected_output}}',
    labels: ['production'],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect((await call('POST', '/score-configs', { name: 'match', data_type: 'NUMERIC', min_value: 0, max_value: 1 })).status).toBe(201);
  ids.model = (
    await call('POST', '/model-connections', { name: 'model', base_url: model.baseURL, model: 'exp-model', api_key: 'sk-exp-model' })
  ).body.connection_id;
  ids.judgeConn = await connectJudge(call, judge, 'sk-exp-judge');
  const ev = await call('POST', '/evaluators', {
    name: 'matcher',
    prompt_id: 'match-judge',
    connection_id: ids.judgeConn,
    score_name: 'match',
    // judges only what an experiment gives it (a live target matching nothing)
    target: { kind: 'executions', filter: { agent_id: ['nobody'] }, sampling_rate: 1 },
  });
  expect(ev.status, JSON.stringify(ev.body)).toBe(201);
  ids.evaluator = ev.body.evaluator_id;
}, TEST_MS);

afterAll(async () => {
  await svc?.close();
  await model?.close();
  await judge?.close();
  await dropTestDatabases();
});

describe(`experiments run by the service (${mode} mode)`, () => {
  it('refuses what it cannot run, naming it, before any call', async () => {
    const ds = await dataset('refusals', 2);
    const before = model.requests.length;
    const post = (body: Record<string, unknown>) =>
      call('POST', `/datasets/${ds}/experiments`, { name: 'x', prompt: { prompt_id: 'doubler' }, connection_id: ids.model, ...body });
    let r = await post({ connection_id: crypto.randomUUID() });
    expect(r.status).toBe(404);
    expect(r.body.detail).toMatch(/^connection_id: model connection .* not found$/);
    r = await post({ prompt: { prompt_id: 'doubler', version: 'staging' } });
    expect(r.status).toBe(404);
    expect(r.body.detail).toMatch(/prompt\.version: prompt doubler has no version or label "staging"/);
    r = await post({ prompt: { prompt_id: 'doubler', version: 9 } });
    expect(r.status).toBe(404);
    r = await post({ prompt: { prompt_id: 'nope' } });
    expect(r.status).toBe(404);
    expect(r.body.detail).toMatch(/prompt\.prompt_id: prompt nope/);
    r = await post({ evaluator_ids: [ids.evaluator, crypto.randomUUID()] });
    expect(r.status).toBe(404);
    expect(r.body.detail).toMatch(/^evaluator_ids\[1]: evaluator .* not found$/);
    r = await post({ evaluator_ids: [ids.evaluator, ids.evaluator] });
    expect(r.status).toBe(422);
    expect(r.body.detail).toBe('evaluator_ids[1]: repeats evaluator_ids[0]');
    r = await post({ checks: [{ kind: 'regex', pattern: '(' }] });
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatch(/^checks\[0]\.pattern: /);
    r = await post({ evaluator_ids: [ids.evaluator], checks: [{ kind: 'exact_match', score_name: 'match' }] });
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatch(/^checks\[0]: writes the score "match", as evaluator_ids\[0] does/);
    r = await post({ checks: [{ kind: 'json_valid' }, { kind: 'json_valid' }] });
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatch(/^checks\[1]: /);
    r = await post({ checks: [{ kind: 'numeric_tolerance' }] });
    expect(r.status).toBe(400);
    r = await post({ concurrency: 0 });
    expect(r.status).toBe(400);
    r = await post({ max_cost_usd: -1 });
    expect(r.status).toBe(400);
    // below a nano-dollar, the precision of costs
    r = await post({ max_cost_usd: 6e-323 });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/max_cost_usd/);
    r = await call('POST', `/datasets/${crypto.randomUUID()}/experiments`, {
      name: 'x',
      prompt: { prompt_id: 'doubler' },
      connection_id: ids.model,
    });
    expect(r.status).toBe(404);
    r = await call('GET', `/datasets/${ds}/experiments/${crypto.randomUUID()}`);
    expect(r.status).toBe(404);
    r = await call('GET', `/datasets/${ds}/experiments/not-a-uuid`);
    expect(r.status).toBe(404);
    expect(model.requests.length).toBe(before);
    // a name is its run's: taken once
    const once = await start(ds, { name: 'once' });
    await ended(ds, once.experiment_id, 'the first experiment to end');
    r = await post({ name: 'once' });
    expect(r.status).toBe(409);
    r = await call('POST', `/datasets/${ds}/experiments/${once.experiment_id}/cancel`);
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/ended already \(done\)/);
  });

  it(
    'runs 30 items at bounded concurrency, retries a 429, checks and judges each once, spends exactly what was recorded',
    async () => {
      // answers are right but for multiples of 5 (expected off by one); 3, 13 and 23 answer 429 first
      const ds = await dataset(
        'full',
        30,
        (i) => (i % 5 === 0 ? String(i * 2 + 1) : String(i * 2)),
        (i) => (i % 10 === 3 ? 'flaky' : ''),
      );
      delays.set('full', 40);
      const e = await start(ds, {
        name: 'v2 on doubles',
        evaluator_ids: [ids.evaluator],
        checks: [
          { kind: 'exact_match' },
          { kind: 'numeric_tolerance', tolerance: 0.5, score_name: 'close' },
          { kind: 'regex', pattern: '^\\d+$', score_name: 'digits' },
          { kind: 'contains', value: '0', score_name: 'has_zero' },
          { kind: 'json_valid' },
        ],
        concurrency: 8,
        metadata: { purpose: 'test' },
      });
      const done = await ended(ds, e.experiment_id, 'the experiment to end');
      expect(done.status, JSON.stringify(done)).toBe('done');
      expect(done.prompt).toEqual({ prompt_id: 'doubler', version: 2 });
      expect(done.progress).toEqual({
        items: 30,
        pending: 0,
        done: 30,
        failed: 0,
        spent_usd: usd(30n * (MODEL_CALL_NANOS + JUDGE_CALL_NANOS)),
      });
      const items = (await call('GET', `/datasets/${ds}/experiments/${e.experiment_id}/items?limit=100`)).body.items;
      expect(items).toHaveLength(30);
      expect(new Set(items.map((i: { trace_id: string }) => i.trace_id)).size).toBe(30);
      expect(items.filter((i: { attempts: number }) => i.attempts === 2)).toHaveLength(3);
      expect(items.every((i: { cost_usd: string }) => i.cost_usd === usd(MODEL_CALL_NANOS + JUDGE_CALL_NANOS))).toBe(true);
      // 33 model requests (30 and three 429s), 30 judgements, at most 8 at once
      expect(seen(model, 'full')).toHaveLength(33);
      expect(seen(judge, 'full')).toHaveLength(30);
      expect(model.maxInFlight).toBeLessThanOrEqual(8);
      expect(model.maxInFlight).toBeGreaterThan(1);
      // its run reads like any run: each item's answer, its checks and the judge's score
      const run = await call('GET', `/datasets/${ds}/runs/${e.run_id}?limit=100`);
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ name: 'v2 on doubles', prompts: [{ prompt_id: 'doubler', version: 2 }], model: 'exp-model' });
      expect(run.body.totals).toMatchObject({ dataset_items: 30 });
      for (const item of run.body.items) {
        const n = item.input.n as number;
        const right = n % 5 !== 0;
        const scores = Object.fromEntries(Object.entries(item.scores).map(([k, v]) => [k, (v as { value: unknown }).value]));
        expect(scores, `item ${n}`).toEqual({
          exact_match: right,
          match: right ? 1 : 0,
          digits: true,
          close: right,
          has_zero: String(n * 2).includes('0'),
          json_valid: true,
        });
        expect(item.execution).toMatchObject({ status: 'ok', model: 'exp-model', output: String(n * 2), cost_usd: 0.0035 });
      }
      // a call: an execution of source experiment, linked to version 2, priced from the price table
      const x = await call('GET', `/executions/${items[0].trace_id}`);
      expect(x.status).toBe(200);
      expect(x.body).toMatchObject({ source: 'experiment', agent_id: 'experiment', model: 'exp-model', tokens_in: 1000, tokens_out: 100 });
      expect(x.body.template_usages[0]).toMatchObject({ prompt_id: 'doubler', version: 2 });
      expect((await call('GET', `/evaluators/${ids.evaluator}`)).body.status).toMatchObject({ failed: 0, queued: 0 });
      // listed, newest first, by dataset and by project
      const list = await call('GET', `/datasets/${ds}/experiments`);
      expect(list.body.items.map((i: { experiment_id: string }) => i.experiment_id)).toEqual([e.experiment_id]);
      const all = await call('GET', '/experiments?limit=1');
      expect(all.body.items[0].experiment_id).toBe(e.experiment_id);
      expect(all.body.next_cursor).toEqual(expect.any(String));
    },
    TEST_MS,
  );

  it(
    'a model that keeps failing: the item fails after its attempts, recorded as a failed execution, nothing charged',
    async () => {
      const ds = await dataset('outage', 3, undefined, (i) => (i === 2 ? 'broken' : ''));
      const e = await start(ds, { name: 'some broken', checks: [{ kind: 'exact_match' }], max_attempts: 2 });
      const done = await ended(ds, e.experiment_id, 'the experiment to end');
      expect(done.status).toBe('done');
      expect(done.progress).toEqual({ items: 3, pending: 0, done: 2, failed: 1, spent_usd: usd(2n * MODEL_CALL_NANOS) });
      const items = (await call('GET', `/datasets/${ds}/experiments/${e.experiment_id}/items`)).body.items;
      const broken = items.find((i: { status: string }) => i.status === 'failed');
      expect(broken.error).toMatch(/^model: .*500.*\(after 2 attempts\)$/);
      expect(seen(model, 'outage').filter((r) => r.text.includes('broken') && /n=2 /.test(r.text))).toHaveLength(2);
      const x = await call('GET', `/executions/${broken.trace_id}`);
      expect(x.body).toMatchObject({ status: 'error', source: 'experiment', cost_usd: 0 });
    },
    TEST_MS,
  );

  it(
    'the cost cap stops it before the cap is passed; resumed with a higher cap it ends',
    async () => {
      const ds = await dataset('capped', 20);
      const perItem = MODEL_CALL_NANOS + JUDGE_CALL_NANOS;
      // room for five items and a half
      const cap = usd(5n * perItem + perItem / 2n);
      const e = await start(ds, { name: 'capped', evaluator_ids: [ids.evaluator], concurrency: 4, max_cost_usd: Number(cap) });
      const capped = await ended(ds, e.experiment_id, 'the experiment to stop at its cap');
      expect(capped.status).toBe('capped');
      expect(capped.status_detail).toMatch(/^cost cap reached: \$0\.0182 spent of \$0\.02002/);
      expect(capped.progress).toMatchObject({ items: 20, done: 5, pending: 15, spent_usd: usd(5n * perItem) });
      expect(seen(model, 'capped')).toHaveLength(5);
      expect(seen(judge, 'capped')).toHaveLength(5);
      let r = await call('POST', `/datasets/${ds}/experiments/${e.experiment_id}/resume`, { max_cost_usd: 0.01 });
      expect(r.status).toBe(422);
      expect(r.body.detail).toMatch(/^max_cost_usd: 0\.01 is not above what the experiment spent \(\$0\.0182\)/);
      r = await call('POST', `/datasets/${ds}/experiments/${e.experiment_id}/resume`, { max_cost_usd: null });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      const done = await ended(ds, e.experiment_id, 'the resumed experiment to end');
      expect(done).toMatchObject({ status: 'done', max_cost_usd: null });
      expect(done.progress).toMatchObject({ done: 20, pending: 0, spent_usd: usd(20n * perItem) });
      expect(seen(model, 'capped')).toHaveLength(20);
    },
    TEST_MS,
  );

  it(
    'a cancel stops it: no item starts after it',
    async () => {
      const ds = await dataset('cancelled', 30);
      delays.set('cancelled', 200);
      const e = await start(ds, { name: 'cancelled', concurrency: 1 });
      await until(async () => (await experiment(ds, e.experiment_id)).progress.done >= 2, 'two items done', WAIT_MS);
      const r = await call('POST', `/datasets/${ds}/experiments/${e.experiment_id}/cancel`);
      expect(r.status).toBe(200);
      expect(r.body.status).toBe('cancelled');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const after = await experiment(ds, e.experiment_id);
      expect(after.status).toBe('cancelled');
      // the one running when it was cancelled may end; nothing starts after
      expect(seen(model, 'cancelled').length).toBeLessThanOrEqual(r.body.progress.done + 2);
      expect(after.progress.done).toBeLessThan(30);
      const calls = seen(model, 'cancelled').length;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(seen(model, 'cancelled')).toHaveLength(calls);
    },
    TEST_MS,
  );

  it(
    'pins the items as they were at dataset_as_of: a rerun on the same data',
    async () => {
      const ds = await dataset('asof', 3);
      const items = (await call('GET', `/datasets/${ds}/items`)).body.items as Array<{ item_id: string; input: { n: number } }>;
      const [one, two] = [items.find((i) => i.input.n === 1)!, items.find((i) => i.input.n === 2)!];
      await new Promise((resolve) => setTimeout(resolve, 20));
      const first = await start(ds, { name: 'before the edits' });
      const firstDone = await ended(ds, first.experiment_id, 'the first experiment to end');
      // after it: item 1 edited, item 2 archived, an item added
      expect((await call('PATCH', `/datasets/${ds}/items/${one.item_id}`, { input: { n: 100, tag: 'asof', note: '' } })).status).toBe(200);
      expect((await call('PATCH', `/datasets/${ds}/items/${two.item_id}`, { archived: true })).status).toBe(200);
      expect((await call('POST', `/datasets/${ds}/items`, { input: { n: 4, tag: 'asof', note: '' } })).status).toBe(201);
      let r = await call('POST', `/datasets/${ds}/experiments`, {
        name: 'future',
        prompt: { prompt_id: 'doubler' },
        connection_id: ids.model,
        dataset_as_of: new Date(Date.now() + 3_600_000).toISOString(),
      });
      expect(r.status).toBe(422);
      expect(r.body.detail).toMatch(/^dataset_as_of: .* is in the future/);
      const now = await start(ds, { name: 'now' });
      const rerun = await start(ds, { name: 'rerun', dataset_as_of: firstDone.created_at });
      const [nowDone, rerunDone] = [await ended(ds, now.experiment_id, 'now'), await ended(ds, rerun.experiment_id, 'rerun')];
      expect(rerunDone.dataset_as_of).toBe(firstDone.created_at);
      expect(nowDone.dataset_as_of).toBe(nowDone.created_at);
      const pinned = async (id: string) =>
        (await call('GET', `/datasets/${ds}/experiments/${id}/items`)).body.items.map((i: { item_version: number; output: string }) => [
          i.item_version,
          i.output,
        ]);
      // the rerun: items 1-3 at version 1, as the first saw them; now: item 1 at version 2, item 3, item 4
      expect(await pinned(rerun.experiment_id)).toEqual(await pinned(first.experiment_id));
      expect(await pinned(rerun.experiment_id)).toEqual([
        [1, '2'],
        [1, '4'],
        [1, '6'],
      ]);
      expect(await pinned(now.experiment_id)).toEqual([
        [2, '200'],
        [1, '6'],
        [1, '8'],
      ]);
      r = await call('GET', `/datasets/${ds}/runs/compare?runs=${first.run_id},${rerun.run_id}`);
      expect(r.body.comparison.paired_items).toBe(3);
    },
    TEST_MS,
  );

  it(
    'a release gate takes an experiment as evidence only once it has ended',
    async () => {
      const ds = await dataset('gated', 6);
      delays.set('gated', 300);
      const gate = await call('PUT', '/prompts/doubler/labels/canary/gate', { dataset_id: ds, scores: [] });
      expect(gate.status, JSON.stringify(gate.body)).toBeLessThan(300);
      const e = await start(ds, { name: 'evidence', prompt: { prompt_id: 'doubler', version: 2 }, concurrency: 1 });
      const evidence = async () =>
        (await call('GET', '/prompts/doubler/labels/canary/gate/check?version=2')).body.conditions.find(
          (c: { condition: string }) => c.condition === 'evidence_candidate',
        );
      await until(async () => (await experiment(ds, e.experiment_id)).status === 'running', 'the experiment to run', WAIT_MS);
      expect(await evidence()).toMatchObject({ status: 'failed' });
      await ended(ds, e.experiment_id, 'the experiment to end');
      expect(await evidence()).toMatchObject({ status: 'passed' });
    },
    TEST_MS,
  );

  it(
    'resumes after a restart: every item called and judged exactly once',
    async () => {
      const ds = await dataset('resume', 30);
      delays.set('resume', 150);
      const e = await start(ds, { name: 'resumed', evaluator_ids: [ids.evaluator], checks: [{ kind: 'exact_match' }], concurrency: 2 });
      await until(async () => (await experiment(ds, e.experiment_id)).progress.done >= 6, 'six items done', WAIT_MS);
      await svc.close();
      const stopped = seen(model, 'resume').length;
      expect(stopped).toBeLessThan(30);
      await boot();
      const done = await ended(ds, e.experiment_id, 'the resumed experiment to end');
      expect(done.status).toBe('done');
      expect(done.progress).toEqual({
        items: 30,
        pending: 0,
        done: 30,
        failed: 0,
        spent_usd: usd(30n * (MODEL_CALL_NANOS + JUDGE_CALL_NANOS)),
      });
      // the model was asked once per item, the judge judged each execution once
      const asks = seen(model, 'resume').map((r) => /n=(\d+)/.exec(r.text)![1]);
      expect(asks).toHaveLength(30);
      expect(new Set(asks).size).toBe(30);
      expect(seen(judge, 'resume')).toHaveLength(30);
      const items = (await call('GET', `/datasets/${ds}/experiments/${e.experiment_id}/items?limit=100`)).body.items;
      const traceIds = new Set(items.map((i: { trace_id: string }) => i.trace_id));
      const evaluations = await call('GET', `/evaluators/${ids.evaluator}/evaluations?limit=1000`);
      const ofThis = evaluations.body.items.filter((v: { trace_id: string }) => traceIds.has(v.trace_id));
      expect(ofThis).toHaveLength(30);
      expect(ofThis.every((v: { status: string }) => v.status === 'done')).toBe(true);
    },
    TEST_MS,
  );
});
