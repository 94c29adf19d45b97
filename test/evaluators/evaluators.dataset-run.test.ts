// An evaluator whose target is a dataset run (docs/evaluators.md, "Targets"): every execution
// linked to an item of the run is judged exactly once — those linked before the evaluator was
// made and those linked after — with the item's expected output (at the version the run used) in
// the judge prompt, and each judgement writes a score of source eval. Against the loopback judge
// (test/helpers/fake-judge.ts), which scores by comparing the answer with the expected output.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { jsonCaller, startTestService, type TestService } from '../helpers/service.ts';
import { connectJudge, startFakeJudge, verdict, type FakeJudge } from '../helpers/fake-judge.ts';
import { until } from '../helpers/wait.ts';

/** Background work on a loaded 2-core machine: generous bounds (they bound a hang, they time nothing). */
const WAIT_MS = 150_000;
const TEST_MS = 240_000;
let svc: TestService;
let judge: FakeJudge;
let connectionId = '';
const call = jsonCaller(() => `${svc.url}/api/projects/default`);

/** The judge's script: 1 when the answer is the expected output, else 0. */
function script(text: string) {
  const m = /Answer: (.*)\nExpected: (.*)/.exec(text);
  return verdict(m && m[1] === m[2] ? 1 : 0, m ? `answer "${m[1]}", expected "${m[2]}"` : 'no answer');
}

async function record(traceId: string, question: string, answer: string) {
  const r = await call('POST', '/executions', {
    trace_id: traceId,
    agent_id: 'capitals-bot',
    provider: 'openai',
    model: 'gpt-4o-mini',
    tokens_in: 10,
    tokens_out: 5,
    conversation_history: [
      { role: 'user', content: question },
      { role: 'assistant', content: answer },
    ],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

const judgeRequestsFor = (traceId: string) => judge.requests.filter((r) => r.text.includes(`[${traceId}]`));

beforeAll(async () => {
  judge = await startFakeJudge((req) => script(req.text));
  svc = await startTestService({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the judge is on loopback
    EVALUATOR_SCAN_INTERVAL_MS: '250',
    EVALUATOR_BACKOFF_MS: '20',
    SECRETS_KEY: mode === 'server' ? crypto.randomBytes(32).toString('hex') : undefined,
  });
  const prompt = await call('POST', '/prompts', {
    prompt_id: 'run-judge',
    type: 'text',
    template: 'Judge {{question}}\nAnswer: {{output}}\nExpected: {{expected}}',
    labels: ['production'],
  });
  expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
  expect((await call('POST', '/score-configs', { name: 'match', data_type: 'NUMERIC', min_value: 0, max_value: 1 })).status).toBe(201);
  connectionId = await connectJudge(call, judge, 'sk-run-judge');
});
afterAll(async () => {
  await judge?.close();
  await svc?.close();
  await dropTestDatabases();
});

describe(`an evaluator of a dataset run (${mode} mode)`, () => {
  it(
    'judges every execution of the run exactly once, with the expected output, and writes eval scores',
    async () => {
      const ds = (await call('POST', '/datasets', { name: 'capitals' })).body;
      const cases = [
        { q: 'France', expected: 'Paris', answer: 'Paris' },
        { q: 'Italy', expected: 'Rome', answer: 'Milan' },
        { q: 'Spain', expected: { city: 'Madrid' }, answer: '{"city":"Madrid"}' },
        { q: 'Peru', expected: 'Lima', answer: 'Lima' },
        { q: 'Chad', expected: 'N’Djamena', answer: 'none' },
      ];
      const items = (
        await call(
          'POST',
          `/datasets/${ds.dataset_id}/items`,
          cases.map((c) => ({ input: { country: c.q }, expected_output: c.expected })),
        )
      ).body.items as Array<{ item_id: string }>;
      expect(items).toHaveLength(cases.length);
      const run = (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'v1' })).body;
      const other = (await call('POST', `/datasets/${ds.dataset_id}/runs`, { name: 'v0' })).body;
      const traces = cases.map((c) => `run-${c.q.toLowerCase()}`);
      for (const [i, c] of cases.entries()) await record(traces[i]!, `capital of ${c.q} [${traces[i]}]`, c.answer);
      await record('not-in-run', 'capital of Peru [not-in-run]', 'Lima');
      await record('other-run', 'capital of Peru [other-run]', 'Lima');
      const links = `/datasets/${ds.dataset_id}/runs/${run.run_id}/items`;
      // Items 0-2 linked before the evaluator exists; item 4 failed without an execution.
      const linked = await call(
        'POST',
        links,
        [0, 1, 2].map((i) => ({ item_id: items[i]!.item_id, trace_id: traces[i] })),
      );
      expect(linked.status, JSON.stringify(linked.body)).toBeLessThan(300);
      await call('POST', links, { item_id: items[4]!.item_id, status: 'failed', error: 'crashed' });
      await call('POST', `/datasets/${ds.dataset_id}/runs/${other.run_id}/items`, { item_id: items[3]!.item_id, trace_id: 'other-run' });
      // Item 0 edited after the run used it: the judge sees the version the run used.
      expect(
        (
          await call('PATCH', `/datasets/${ds.dataset_id}/items/${items[0]!.item_id}`, {
            input: { country: 'France' },
            expected_output: 'Lyon',
          })
        ).status,
      ).toBe(200);

      const created = await call('POST', '/evaluators', {
        name: 'run judge',
        prompt_id: 'run-judge',
        connection_id: connectionId,
        score_name: 'match',
        variables: { question: 'input', expected: 'expected_output' },
        target: { kind: 'dataset_run', dataset_id: ds.dataset_id, run_id: run.run_id },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.target).toEqual({ kind: 'dataset_run', dataset_id: ds.dataset_id, run_id: run.run_id });
      const id = created.body.evaluator_id as string;
      const status = async () => (await call('GET', `/evaluators/${id}`)).body.status;
      await until(async () => (await status()).done === 3, 'the 3 linked executions judged', WAIT_MS);

      // Item 3 linked after: the scan finds it.
      await call('POST', links, { item_id: items[3]!.item_id, trace_id: traces[3] });
      await until(async () => (await status()).done === 4, 'the late link judged', WAIT_MS);
      expect(await status()).toMatchObject({ queued: 0, failed: 0, done: 4 });
      // A backfill queues nothing new: each was queued (and judged) once.
      const again = await call('POST', `/evaluators/${id}/backfill`, { start: '2020-01-01T00:00:00Z', end: '2030-01-01T00:00:00Z' });
      expect(again.body).toMatchObject({ matched: 4, sampled: 4, queued: 0 });

      const judged = [0, 1, 2, 3].map((i) => traces[i]!);
      for (const t of judged) expect(judgeRequestsFor(t), t).toHaveLength(1);
      for (const t of [traces[4]!, 'not-in-run', 'other-run']) expect(judgeRequestsFor(t), t).toHaveLength(0);
      // The expected output reached the prompt through the variable mapping: text as is, JSON otherwise, v1 for the edited item.
      expect(judgeRequestsFor(traces[0]!)[0]!.body.messages[0]!.content).toBe(
        `Judge user: capital of France [${traces[0]}]\nAnswer: Paris\nExpected: Paris`,
      );
      expect(judgeRequestsFor(traces[2]!)[0]!.text).toContain('Expected: {"city":"Madrid"}');

      const evaluations = (await call('GET', `/evaluators/${id}/evaluations?limit=100`)).body.items as any[];
      expect(evaluations.map((e) => e.trace_id).sort()).toEqual([...judged].sort());
      const scores = (await call('GET', '/scores?name=match&source=eval&limit=100')).body.items as any[];
      const byTrace = Object.fromEntries(scores.map((s) => [s.trace_id, s]));
      expect(Object.keys(byTrace).sort()).toEqual([...judged].sort());
      expect(judged.map((t) => byTrace[t].value)).toEqual([1, 0, 1, 1]);
      expect(byTrace[traces[1]!]).toMatchObject({ source: 'eval', comment: 'answer "Milan", expected "Rome"' });
      for (const e of evaluations) expect(byTrace[e.trace_id].id).toBe(e.score_id);
    },
    TEST_MS,
  );

  it('refuses a dataset_run target that does not fit: a 4xx naming the field', async () => {
    const ds = (await call('POST', '/datasets', { name: 'targets' })).body;
    const elsewhere = (await call('POST', '/datasets', { name: 'elsewhere' })).body;
    const run = (await call('POST', `/datasets/${elsewhere.dataset_id}/runs`, { name: 'r' })).body;
    const base = {
      prompt_id: 'run-judge',
      connection_id: connectionId,
      score_name: 'match',
      variables: { question: 'input', expected: 'expected_output' },
    };
    const cases: Array<[unknown, number, string]> = [
      [{ kind: 'dataset_run', dataset_id: ds.dataset_id }, 400, 'target.run_id: a target of kind dataset_run needs it'],
      [
        { kind: 'dataset_run', dataset_id: ds.dataset_id, run_id: run.run_id, sampling_rate: 0.5 },
        400,
        'target.sampling_rate: a target of kind dataset_run has no sampling_rate',
      ],
      [{ kind: 'executions', run_id: run.run_id }, 400, 'target.run_id: a target of kind executions has no run_id'],
      [
        { kind: 'dataset_run', dataset_id: ds.dataset_id, run_id: run.run_id },
        422,
        `target.run_id: ${run.run_id} is not a run of dataset ${ds.dataset_id} in this project`,
      ],
    ];
    for (const [i, [target, code, detail]] of cases.entries()) {
      const r = await call('POST', '/evaluators', { ...base, name: `t${i}`, target });
      expect(r, JSON.stringify(target)).toMatchObject({ status: code, body: { detail } });
    }
  });
});
