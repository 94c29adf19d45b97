// LLM-as-judge evaluators end to end (docs/evaluators.md), against a real OpenAI-compatible judge
// on loopback (test/helpers/fake-judge.ts) that answers by what it is asked: a judgement, a
// malformed answer, a 429, a slow answer. Each execution's case is in its question ("case
// <name>"), so the judge's script and the test agree on what should happen to it.
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { connectJudge, startFakeJudge, verdict, type FakeJudge, type JudgeReply } from '../helpers/fake-judge.ts';
import { until } from '../helpers/wait.ts';

/** Background work on a loaded 2-core machine: generous bounds (they bound a hang, they time nothing). */
const WAIT_MS = 150_000;
const TEST_MS = 240_000;
// base64url, not hex: a test below looks for every 4 characters of the key, which hex ids would hold by
// chance. "sk-" is a public prefix (key-redaction.ts): what follows is the secret.
const API_KEY = `sk-${crypto.randomBytes(24).toString('base64url')}`;
const logLines: string[] = [];
const responses: string[] = [];
let svc: TestService;
let judge: FakeJudge;
let connectionId = '';

/** The judge's script: by the case named in the question. 429 cases fail their first two calls. */
const seenCalls = new Map<string, number>();
function script(text: string, authorization = ''): JudgeReply {
  const c = /case (\S+)/.exec(text)?.[1] ?? 'good';
  const n = (seenCalls.get(c) ?? 0) + 1;
  seenCalls.set(c, n);
  if (c.startsWith('notjson')) return { kind: 'judgement', content: 'I would say it is rather good.' };
  if (c.startsWith('outofrange')) return verdict(7, 'way too high');
  if (c.startsWith('noscore')) return { kind: 'judgement', content: JSON.stringify({ reasoning: 'forgot the score' }) };
  if (c.startsWith('flaky429') && n <= 2) return { kind: 'status', status: 429, message: 'Rate limit reached, slow down' };
  if (c.startsWith('always429')) return { kind: 'status', status: 429, message: 'Rate limit reached, slow down' };
  if (c.startsWith('slow')) return { ...verdict(0.5), delayMs: 3_000 };
  // A judge behind a debug proxy: the Authorization header it was sent, echoed back.
  if (c.startsWith('echotext')) return { kind: 'judgement', content: `I was sent "Authorization: ${authorization}"` };
  if (c.startsWith('echoerror')) return { kind: 'status', status: 400, message: `bad request, headers: Authorization: ${authorization}` };
  if (c.startsWith('echojson'))
    return {
      kind: 'judgement',
      // Whole, by its last 4 characters, and spelled out in JSON escapes that decoding undoes.
      content: `{"score": 0.8, "reasoning": "fine; you sent ${authorization}, key ...${API_KEY.slice(-4)}, or ${[...API_KEY].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`,
    };
  if (c.startsWith('badkey')) return { kind: 'status', status: 401, message: `Incorrect API key provided: ${API_KEY}` };
  return verdict(c.startsWith('bad') ? 0.1 : 0.9, `reasoning about ${c}`);
}

const call = async (method: string, path: string, body?: unknown) => {
  const r = await getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  responses.push(typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? ''));
  return r;
};

/** Records an execution of `agent` whose question names its case. */
async function record(traceId: string, agent: string, caseName: string, extra: Record<string, unknown> = {}) {
  const r = await call('POST', '/executions', {
    ...extra,
    trace_id: traceId,
    agent_id: agent,
    provider: 'openai',
    model: 'gpt-4o-mini',
    tokens_in: 10,
    tokens_out: 5,
    metadata: { case: caseName },
    conversation_history: [
      { role: 'user', content: `question ${traceId}, case ${caseName}` },
      { role: 'assistant', content: `answer to ${traceId}` },
    ],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/** Records one execution of `agent` per trace id, with its case. */
async function recordCases(agent: string, cases: Record<string, string>) {
  for (const [traceId, caseName] of Object.entries(cases)) await record(traceId, agent, caseName);
}

async function createEvaluator(name: string, agent: string, extra: Record<string, unknown> = {}) {
  const r = await call('POST', '/evaluators', {
    name,
    prompt_id: 'judge',
    connection_id: connectionId,
    score_name: 'correctness',
    variables: { question: 'input', case_name: 'metadata.case' },
    target: { kind: 'executions', filter: { agent_id: [agent] }, sampling_rate: 1 },
    concurrency: 8,
    ...extra,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { evaluator_id: string; agent_id: string };
}

const status = async (id: string) => (await call('GET', `/evaluators/${id}`)).body.status;
const evaluations = async (id: string, q = '') => (await call('GET', `/evaluators/${id}/evaluations?limit=1000${q}`)).body.items as any[];
/** Waits until the evaluator has judged and failed these many; then its evaluations by trace id. */
async function settled(evaluatorId: string, want: { done: number; failed: number }): Promise<Record<string, any>> {
  await until(
    async () => {
      const s = await status(evaluatorId);
      return s.done === want.done && s.failed === want.failed;
    },
    `${want.done} judged, ${want.failed} failed`,
    WAIT_MS,
  );
  return Object.fromEntries((await evaluations(evaluatorId)).map((e) => [e.trace_id, e]));
}
const judgeCallsFor = (traceId: string) => judge.requests.filter((r) => r.text.includes(`question ${traceId},`)).length;

/** Whether the evaluator samples the trace, computed here from the documented rule (sha256 of "<evaluator>:<trace>"). */
const sampledHere = (evaluatorId: string, traceId: string, rate: number) =>
  crypto.createHash('sha256').update(`${evaluatorId}:${traceId}`).digest().readUInt32BE(0) / 2 ** 32 < rate;

beforeAll(async () => {
  judge = await startFakeJudge((req) => script(req.text, req.headers.authorization));
  const logs = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  svc = await startTestService(
    {
      EVALUATOR_ALLOW_PRIVATE: 'true', // the judge is on loopback
      // Direct records are visible when they are acknowledged: a short lookback finds them all,
      // and keeps each scan small on a loaded machine.
      EVALUATOR_SCAN_INTERVAL_MS: '250',
      EVALUATOR_SCAN_LOOKBACK_MS: '5000',
      EVALUATOR_BACKOFF_MS: '20',
      EVALUATOR_ATTEMPTS: '3',
      // Server stores need the key from the environment (embedded ones make DATA_DIR/secrets.key).
      SECRETS_KEY: mode === 'server' ? crypto.randomBytes(32).toString('hex') : undefined,
    },
    { logger: createLogger({ logLevel: 'debug' }, logs) },
  );
  const prompt = await call('POST', '/prompts', {
    prompt_id: 'judge',
    type: 'chat',
    template: [
      { role: 'system', content: 'You judge answers. Reply with JSON {"score": 0..1, "reasoning": "..."}.' },
      { role: 'user', content: 'Question: {{question}}\nAnswer: {{output}}\nCase: {{case_name}}' },
    ],
    config: { temperature: 0 },
    labels: ['production'],
  });
  expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
  const cfg = await call('POST', '/score-configs', { name: 'correctness', data_type: 'NUMERIC', min_value: 0, max_value: 1 });
  expect(cfg.status).toBe(201);
  const price = await call('PUT', '/models/judge-model', { provider: 'openai', input_per_mtok: 1, output_per_mtok: 4 });
  expect(price.status, JSON.stringify(price.body)).toBeLessThan(300);
  connectionId = await connectJudge(call, judge, API_KEY);
});
afterAll(async () => {
  await svc?.close();
  await judge?.close();
  await dropTestDatabases();
});

describe(`evaluators (${mode} mode)`, () => {
  it(
    'scores exactly the sampled executions, once each, and records each judge call as an execution',
    async () => {
      const ev = await createEvaluator('sampled', 'support-bot', {
        target: { kind: 'executions', filter: { agent_id: ['support-bot'] }, sampling_rate: 0.5 },
      });
      const ids = Array.from({ length: 24 }, (_, i) => `support-${i}`);
      for (const id of ids) await record(id, 'support-bot', `good-${id}`);
      await record('other-1', 'other-bot', 'good-other'); // not matching the filter
      const expected = ids.filter((id) => sampledHere(ev.evaluator_id, id, 0.5)).sort();
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(ids.length);

      await until(async () => (await status(ev.evaluator_id)).done === expected.length, 'the sampled executions judged', WAIT_MS);
      // A backfill over everything finds nothing new: each was queued (and judged) once.
      const again = await call('POST', `/evaluators/${ev.evaluator_id}/backfill`, {
        start: new Date(Date.now() - 3_600_000).toISOString(),
        end: new Date(Date.now() + 60_000).toISOString(),
      });
      expect(again.body).toMatchObject({ matched: ids.length, sampled: expected.length, queued: 0 });

      const done = await evaluations(ev.evaluator_id);
      expect(done.map((e) => e.trace_id).sort()).toEqual(expected);
      expect(done.every((e) => e.status === 'done' && e.attempts === 1 && e.error === null)).toBe(true);
      for (const id of expected) expect(judgeCallsFor(id)).toBe(1);
      for (const id of ids.filter((i) => !expected.includes(i))) expect(judgeCallsFor(id)).toBe(0);
      expect(judgeCallsFor('other-1')).toBe(0);

      const scores = (await call('GET', '/scores?name=correctness&source=eval&limit=1000')).body.items as any[];
      const mine = scores.filter((s) => ids.includes(s.trace_id));
      expect(mine.map((s) => s.trace_id).sort()).toEqual(expected);
      const first = done[0];
      const score = mine.find((s) => s.trace_id === first.trace_id);
      expect(score).toMatchObject({ id: first.score_id, value: 0.9, comment: `reasoning about good-${first.trace_id}`, source: 'eval' });
      // The score links to its judge call: the execution whose trace id is the score's id.
      expect(first.judge_trace_id).toBe(first.score_id);
      const judgeCall = await call('GET', `/executions/${first.judge_trace_id}`);
      expect(judgeCall.status).toBe(200);
      expect(judgeCall.body).toMatchObject({
        agent_id: ev.agent_id,
        provider: 'openai',
        model: 'judge-model',
        tokens_in: 100,
        tokens_out: 20,
        metadata: { evaluator_id: ev.evaluator_id, evaluated_trace_id: first.trace_id },
      });
      // The judge saw the variables: the input transcript, the output, the metadata key.
      const seen = judge.requests.find((r) => r.text.includes(`question ${first.trace_id},`))!;
      expect(seen.body).toMatchObject({ model: 'judge-model', temperature: 0 });
      expect(seen.body.messages[1]!.content).toBe(
        `Question: user: question ${first.trace_id}, case good-${first.trace_id}\nAnswer: answer to ${first.trace_id}\nCase: good-${first.trace_id}`,
      );
      expect(seen.headers.authorization).toBe(`Bearer ${API_KEY}`);
    },
    TEST_MS,
  );

  it(
    "the judge's cost shows in spend under the evaluator's agent",
    async () => {
      const ev = (await call('GET', '/evaluators')).body.items.find((e: any) => e.name === 'sampled');
      expect(ev.status).toMatchObject({ queued: 0, failed: 0 });
      const judged = ev.status.done as number;
      const spend = await call('GET', `/spend?group_by=agent&agent_id=${encodeURIComponent(ev.agent_id)}`);
      expect(spend.status, JSON.stringify(spend.body)).toBe(200);
      // 100 tokens in at $1/Mtok and 20 out at $4/Mtok: $0.00018 a call, exactly.
      expect(spend.body.total).toMatchObject({ executions: judged, tokens_in: 100 * judged, tokens_out: 20 * judged });
      expect(spend.body.total.cost_usd).toBe((judged * 0.00018).toFixed(5).replace(/0+$/, ''));
    },
    TEST_MS,
  );

  it(
    'malformed judge output is a failed evaluation with its reason, and no score',
    async () => {
      const ev = await createEvaluator('strict', 'mal-bot');
      await recordCases('mal-bot', { 'mal-1': 'notjson', 'mal-2': 'outofrange', 'mal-3': 'noscore' });
      await until(async () => (await status(ev.evaluator_id)).failed === 3, 'three failed evaluations', WAIT_MS);
      const byTrace = Object.fromEntries((await evaluations(ev.evaluator_id)).map((e) => [e.trace_id, e]));
      expect(byTrace['mal-1']).toMatchObject({ status: 'failed', score_id: null });
      expect(byTrace['mal-1'].error).toMatch(/^malformed judge output: not JSON/);
      expect(byTrace['mal-2'].error).toBe('judge score refused by the score config: value: must be <= 1 (score config "correctness")');
      expect(byTrace['mal-3'].error).toBe('malformed judge output: no "score"');
      for (const t of ['mal-1', 'mal-2', 'mal-3']) {
        expect((await call('GET', `/scores?trace_id=${t}`)).body.items).toEqual([]);
        // The call was made and paid for: it is recorded all the same.
        expect((await call('GET', `/executions/${byTrace[t].judge_trace_id}`)).status).toBe(200);
      }
      const s = await status(ev.evaluator_id);
      expect(s).toMatchObject({ queued: 0, done: 0, failed: 3 });
      expect(s.last_error).toEqual(expect.any(String));
    },
    TEST_MS,
  );

  it(
    '429s and timeouts are retried with backoff, then reported',
    async () => {
      const ev = await createEvaluator('flaky', 'flaky-bot', { timeout_ms: 300 });
      await recordCases('flaky-bot', { 'flaky-1': 'flaky429', 'always-1': 'always429', 'slow-1': 'slow' });
      const byTrace = await settled(ev.evaluator_id, { done: 1, failed: 2 }); // one after retries
      expect(byTrace['flaky-1']).toMatchObject({ status: 'done', attempts: 3, error: null });
      expect(judgeCallsFor('flaky-1')).toBe(3);
      expect(byTrace['always-1']).toMatchObject({
        status: 'failed',
        attempts: 3,
        score_id: null,
        error: 'judge answered HTTP 429: Rate limit reached, slow down (after 3 attempts)',
      });
      expect(judgeCallsFor('always-1')).toBe(3);
      expect(byTrace['slow-1']).toMatchObject({
        status: 'failed',
        attempts: 3,
        error: 'judge call timed out after 300 ms (after 3 attempts)',
      });
      expect((await call('GET', '/scores?trace_id=flaky-1')).body.items).toMatchObject([{ value: 0.9, source: 'eval' }]);
    },
    TEST_MS,
  );

  it(
    'an execution started before the evaluator existed but stored after it is judged: the scan goes by arrival',
    async () => {
      const ev = await createEvaluator('by-arrival', 'late-bot');
      // A few scans pass first, so the late one arrives well after the evaluator's first scan.
      await until(async () => (await call('GET', `/evaluators/${ev.evaluator_id}`)).body.scanned_to !== null, 'a first scan', WAIT_MS);
      const created = Date.parse((await call('GET', `/evaluators/${ev.evaluator_id}`)).body.created_at);
      await record('late-1', 'late-bot', 'good-late', { started_at: new Date(created - 3_600_000).toISOString() });
      await until(async () => (await status(ev.evaluator_id)).done === 1, 'the late-started execution judged', WAIT_MS);
      expect(await evaluations(ev.evaluator_id)).toMatchObject([{ trace_id: 'late-1', status: 'done' }]);
      expect(judgeCallsFor('late-1')).toBe(1);
    },
    TEST_MS,
  );

  it(
    'pausing stops new judgements; resuming runs the queued ones',
    async () => {
      const ev = await createEvaluator('pausable', 'pause-bot', { paused: true });
      expect((await status(ev.evaluator_id)).state).toBe('paused');
      await record('pause-1', 'pause-bot', 'good');
      await record('pause-2', 'pause-bot', 'good');
      // A paused evaluator's backfill queues, but nothing is judged.
      const bf = await call('POST', `/evaluators/${ev.evaluator_id}/backfill`, {
        start: new Date(Date.now() - 60_000).toISOString(),
        end: new Date(Date.now() + 60_000).toISOString(),
      });
      expect(bf.body).toMatchObject({ matched: 2, sampled: 2, queued: 2 });
      expect(await status(ev.evaluator_id)).toMatchObject({ state: 'paused', queued: 2, done: 0 });
      expect(judgeCallsFor('pause-1') + judgeCallsFor('pause-2')).toBe(0);
      const resumed = await call('POST', `/evaluators/${ev.evaluator_id}/resume`);
      expect(resumed.body.status.state).toBe('active');
      await until(async () => (await status(ev.evaluator_id)).done === 2, 'the queued ones judged after resume', WAIT_MS);
      expect(judgeCallsFor('pause-1')).toBe(1);
      expect(judgeCallsFor('pause-2')).toBe(1);
    },
    TEST_MS,
  );

  it(
    'the API key is in no response and no log line, even when the judge echoes it',
    async () => {
      const ev = await createEvaluator('leaky', 'leak-bot');
      await record('leak-1', 'leak-bot', 'badkey');
      await until(async () => (await status(ev.evaluator_id)).failed === 1, 'the 401 reported', WAIT_MS);
      const [e] = await evaluations(ev.evaluator_id);
      expect(e.error).toBe('judge answered HTTP 401: Incorrect API key provided: [redacted]');
      // Every route that shows a connection or an evaluator, read once more.
      await call('GET', '/model-connections');
      const one = await call('GET', `/model-connections/${connectionId}`);
      expect(one.body).toEqual({
        connection_id: connectionId,
        name: 'loopback judge',
        base_url: judge.baseURL,
        model: 'judge-model',
        provider: 'openai',
        api_key_set: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      await call('GET', '/evaluators');
      await call('GET', `/executions/export?format=jsonl`);
      expect(logLines.length).toBeGreaterThan(0);
      const piece = API_KEY.slice(10, 18);
      for (const text of [...responses, ...logLines]) {
        expect(text).not.toContain(API_KEY);
        expect(text).not.toContain(piece);
      }
      // At rest it is sealed: the stored row does not hold it either.
      const [row] = await svc.stores.postgres.query<{ api_key_sealed: string }>(
        'SELECT api_key_sealed FROM model_connections WHERE connection_id = $1',
        [connectionId],
      );
      expect(row!.api_key_sealed).not.toContain(API_KEY);
      expect(Buffer.from(row!.api_key_sealed, 'base64').toString('latin1')).not.toContain(piece);
    },
    TEST_MS,
  );

  it(
    'a judge echoing the Authorization header leaves no piece of the key in errors, scores or the judge call',
    async () => {
      const ev = await createEvaluator('echoed', 'echo-bot');
      await recordCases('echo-bot', { 'echo-1': 'echotext', 'echo-2': 'echoerror', 'echo-3': 'echojson' });
      const byTrace = await settled(ev.evaluator_id, { done: 1, failed: 2 });
      expect(judge.requests.filter((r) => /case echo/.test(r.text)).every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(
        true,
      );
      expect(byTrace['echo-1'].error).toBe('malformed judge output: not JSON ("I was sent \\"Authorization: Bearer [redacted]\\"")');
      expect(byTrace['echo-2'].error).toBe('judge answered HTTP 400: bad request, headers: Authorization: Bearer [redacted]');
      const [score] = (await call('GET', '/scores?trace_id=echo-3')).body.items;
      expect(score).toMatchObject({ value: 0.8, comment: 'fine; you sent Bearer [redacted], key ...[redacted], or [redacted]' });
      // Everything the API shows of these judgements, as text: no run of 4 characters of the key.
      const shown: string[] = [JSON.stringify(await status(ev.evaluator_id)), JSON.stringify(byTrace), JSON.stringify(score)];
      // The two that answered were recorded as judge calls (the 400 was not: nothing was answered).
      expect(byTrace['echo-2'].judge_trace_id).toBeNull();
      for (const e of [byTrace['echo-1'], byTrace['echo-3']]) {
        const detail = await call('GET', `/executions/${e.judge_trace_id}?include_messages=true`);
        expect(detail.status).toBe(200);
        expect(JSON.stringify(detail.body.conversation_history)).toContain('[redacted]');
        shown.push(JSON.stringify({ model: detail.body.model, messages: detail.body.conversation_history }));
      }
      const secret = API_KEY.slice('sk-'.length);
      const pieces = Array.from({ length: secret.length - 3 }, (_, i) => secret.slice(i, i + 4));
      for (const text of shown)
        expect(
          pieces.filter((p) => text.includes(p)),
          text,
        ).toEqual([]);
      // Stored rows hold none either: the evaluations as written, the judge calls' messages.
      const rows = await svc.stores.postgres.query<{ error: string | null }>('SELECT error FROM evaluations WHERE evaluator_id = $1', [
        ev.evaluator_id,
      ]);
      const stored = rows.map((r) => r.error ?? '').join('\n');
      expect(pieces.filter((p) => stored.includes(p))).toEqual([]);
    },
    TEST_MS,
  );
  it(
    'a daily judge budget: judgements start only while the day stays within it; the rest fail with the reason',
    async () => {
      // $0.00018 a call: two fit in $0.0005, a third would make $0.00054
      const ev = await createEvaluator('budgeted', 'budget-bot', { max_daily_cost_usd: 0.0005 });
      expect(ev).toMatchObject({ max_daily_cost_usd: 0.0005 });
      const ids = Array.from({ length: 8 }, (_, i) => `budget-${i}`);
      for (const id of ids) await record(id, 'budget-bot', 'good');
      const byTrace = await settled(ev.evaluator_id, { done: 2, failed: 6 });
      for (const e of Object.values(byTrace).filter((x) => x.status === 'failed'))
        expect(e.error).toMatch(/^daily judge budget reached: \$0\.000(18|36) of \$0\.0005 spent today \(UTC\)$/);
      expect(ids.reduce((n, id) => n + judgeCallsFor(id), 0)).toBe(2);
      const spent = await call('GET', `/spend?metadata.evaluator_id=${ev.evaluator_id}&window=24h`);
      expect(spent.body.total).toMatchObject({ executions: 2, cost_usd: '0.00036' });
      // raised: the next executions are judged again
      expect((await call('PUT', `/evaluators/${ev.evaluator_id}`, { max_daily_cost_usd: 1 })).body).toMatchObject({
        max_daily_cost_usd: 1,
      });
      await record('budget-more', 'budget-bot', 'good');
      await settled(ev.evaluator_id, { done: 3, failed: 6 });
      expect((await call('PUT', `/evaluators/${ev.evaluator_id}`, { max_daily_cost_usd: null })).body).toMatchObject({
        max_daily_cost_usd: null,
      });
      for (const bad of [0, -1, '1'])
        expect((await call('PUT', `/evaluators/${ev.evaluator_id}`, { max_daily_cost_usd: bad })).status, String(bad)).toBe(400);
    },
    TEST_MS,
  );

  it(
    'filters by metadata and by the prompt label the execution used: only those are judged',
    async () => {
      const ev = await createEvaluator('gold-production', 'filter-bot', {
        target: {
          kind: 'executions',
          filter: { agent_id: ['filter-bot'], metadata: { tier: 'gold' }, prompt_id: 'judge', prompt_label: 'production' },
          sampling_rate: 1,
        },
      });
      const cases: Array<[string, string, string | undefined]> = [
        ['f-gold-prod', 'gold', 'production'],
        ['f-gold-v1', 'gold', '1'], // the same version, named by number: not the label
        ['f-free-prod', 'free', 'production'],
        ['f-gold-none', 'gold', undefined],
      ];
      for (const [id, tier, ref] of cases) {
        const r = await call('POST', '/executions', {
          trace_id: id,
          agent_id: 'filter-bot',
          metadata: { case: 'good', tier },
          conversation_history: [
            { role: 'user', content: `question ${id}, case good` },
            { role: 'assistant', content: `answer to ${id}` },
          ],
          ...(ref ? { template_usages: [{ prompt_id: 'judge', version: ref }] } : {}),
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      const byTrace = await settled(ev.evaluator_id, { done: 1, failed: 0 });
      expect(Object.keys(byTrace)).toEqual(['f-gold-prod']);
      // the same filters on the list
      const listed = await call('GET', '/executions?agent_id=filter-bot&prompt_label=production&metadata.tier=gold');
      expect(listed.body.items.map((e: { trace_id: string }) => e.trace_id)).toEqual(['f-gold-prod']);
      expect(listed.body.total).toBe(1);
      const anyPrompt = await call('GET', '/executions?agent_id=filter-bot&prompt_label=production');
      expect(anyPrompt.body.items.map((e: { trace_id: string }) => e.trace_id).sort()).toEqual(['f-free-prod', 'f-gold-prod']);
    },
    TEST_MS,
  );

  it('an evaluator deleted while it is paused or resumed: 404 or done, never a 500', async () => {
    const made = [];
    for (let i = 0; i < 40; i++) made.push(await createEvaluator(`raced-${i}`, 'raced-bot', { paused: i % 2 === 1 }));
    // Each pause or resume reads its evaluator, then writes it: the delete lands in between for some.
    const answers = await Promise.all(
      made.flatMap((ev, i) => [
        call('POST', `/evaluators/${ev.evaluator_id}/${i % 2 === 1 ? 'resume' : 'pause'}`),
        call('DELETE', `/evaluators/${ev.evaluator_id}`),
      ]),
    );
    for (const r of answers) expect([200, 204, 404], JSON.stringify(r.body)).toContain(r.status);
    for (const r of answers.filter((a) => a.status === 404)) expect(r.body).toEqual({ detail: 'Evaluator not found' });
    for (const ev of made) expect((await call('GET', `/evaluators/${ev.evaluator_id}`)).status).toBe(404);
  });
});
