// The playground end to end (docs/playground.md), against real OpenAI-compatible models on loopback
// (test/helpers/fake-judge.ts, streamed as OpenAI streams): a saved version or an unsaved template
// sent to connections side by side, each call recorded as an execution priced from the price
// table; streamed answers; failing, slow and unknown models; refusals before any call.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode } from '../helpers/env.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { startFakeJudge, type FakeJudge, type JudgeReply } from '../helpers/fake-judge.ts';

const API_KEY = `sk-${crypto.randomBytes(24).toString('base64url')}`;
let svc: TestService;
let fast: FakeJudge;
let failing: FakeJudge;
const ids: Record<string, string> = {};

const call = async (method: string, path: string, body?: unknown) =>
  getJson(`${svc.url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** The answer names what it was sent; "echo key" repeats the connection's key, "slow" takes 3 s. */
function script(text: string, authorization: string): JudgeReply {
  if (text.includes('echo key')) return { kind: 'judgement', content: `here: ${authorization.slice('Bearer '.length)} done` };
  return {
    kind: 'judgement',
    // a long answer streams in many pieces: longer than what the stream holds back (the key's length, twice)
    content: `Answer to «${text.split('\n').pop()}» ✓${text.includes('long') ? ' and more'.repeat(40) : ''}`,
    promptTokens: 1_200,
    completionTokens: 345,
    ...(text.includes('slow') ? { delayMs: 3_000 } : {}),
  };
}

async function connect(name: string, judge: FakeJudge, model: string): Promise<string> {
  const r = await call('POST', '/model-connections', { name, base_url: judge.baseURL, model, api_key: API_KEY });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.connection_id as string;
}

/** A streamed run's events, in order, parsed from the text/event-stream body. */
async function streamed(body: unknown): Promise<{ status: number; type: string; events: Array<{ event: string; data: any }> }> {
  const r = await fetch(`${svc.url}/api/projects/default/playground/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...(body as object), stream: true }),
  });
  const text = await r.text();
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null');
      return { event, data };
    });
  return { status: r.status, type: r.headers.get('content-type') ?? '', events };
}

beforeAll(async () => {
  fast = await startFakeJudge((req) => script(req.text, String(req.headers.authorization ?? '')), 'pg-model');
  failing = await startFakeJudge(() => ({ kind: 'status', status: 429, message: 'rate limited, slow down' }), 'pg-model');
  svc = await startTestService({
    EVALUATOR_ALLOW_PRIVATE: 'true', // the models are on loopback
    SECRETS_KEY: mode === 'server' ? crypto.randomBytes(32).toString('hex') : undefined,
  });
  expect((await call('PUT', '/models/pg-model', { provider: 'openai', input_per_mtok: 2.5, output_per_mtok: 10 })).status).toBeLessThan(
    300,
  );
  const prompt = await call('POST', '/prompts', {
    prompt_id: 'support',
    type: 'chat',
    template: [
      { role: 'system', content: 'You are {{persona}}.' },
      { type: 'placeholder', name: 'history' },
      { role: 'user', content: '{{question}}' },
    ],
    config: { temperature: 0.2, max_tokens: 300 },
    labels: ['production'],
  });
  expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
  ids.a = await connect('model a', fast, 'pg-model');
  ids.b = await connect('model b', fast, 'pg-model');
  ids.failing = await connect('failing', failing, 'pg-model');
});
afterAll(async () => {
  await svc?.close();
  await fast?.close();
  await failing?.close();
  await dropTestDatabases();
});

describe(`playground (${mode} mode)`, () => {
  it('sends a saved version to two connections side by side; each call is an execution priced from the price table', async () => {
    const r = await call('POST', '/playground/runs', {
      prompt: { prompt_id: 'support', version: 'production' },
      variables: { persona: 'a helpful agent', question: 'Where is my order?' },
      placeholders: { history: [{ role: 'user', content: 'hello' }] },
      connection_ids: [ids.a, ids.b],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.prompt).toEqual({ prompt_id: 'support', version: 1 });
    expect(r.body.messages).toEqual([
      { role: 'system', content: 'You are a helpful agent.' },
      { role: 'user', content: 'hello' },
      { role: 'user', content: 'Where is my order?' },
    ]);
    // 1,200 tokens in at $2.50 and 345 out at $10 per million: $0.003 + $0.00345
    const cost = ((1_200n * 2_500_000_000n + 345n * 10_000_000_000n) / 1_000_000n).toString(); // nano-dollars
    expect(cost).toBe('6450000');
    expect(r.body.results).toHaveLength(2);
    for (const [i, res] of (r.body.results as any[]).entries()) {
      expect(res).toMatchObject({
        connection_id: i === 0 ? ids.a : ids.b,
        connection_name: i === 0 ? 'model a' : 'model b',
        provider: 'openai',
        model: 'pg-model',
        status: 'ok',
        output: 'Answer to «Where is my order?» ✓',
        error: null,
        tokens_in: 1_200,
        tokens_out: 345,
        cost_usd: '0.00645',
        cost_source: 'computed',
      });
      const e = await call('GET', `/executions/${res.trace_id}`);
      expect(e.status).toBe(200);
      expect(e.body).toMatchObject({
        source: 'playground',
        agent_id: 'playground',
        status: 'ok',
        cost_usd: 0.00645,
        tags: ['playground'],
        metadata: { playground_run_id: r.body.run_id, connection_id: res.connection_id },
      });
      expect(e.body.template_usages).toMatchObject([{ prompt_id: 'support', version: 1 }]);
    }
    // the model was sent the messages and the version's config
    const sent = fast.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: 'pg-model', temperature: 0.2, max_tokens: 300 });
    expect(sent.stream).toBeUndefined();
    // in spend like any call
    const spend = await call('GET', '/spend?group_by=agent&window=24h');
    expect(spend.body.rows.find((x: { agent: string }) => x.agent === 'playground')).toMatchObject({ cost_usd: '0.0129', executions: 2 });
  });

  it('streams each answer as it comes, then its result, then the run; an unsaved template needs no prompt', async () => {
    const s = await streamed({ template: 'Summarise: {{text}}', variables: { text: 'çà et là, ünïcödé (long)' }, connection_ids: [ids.a] });
    expect(s.status).toBe(200);
    expect(s.type).toMatch(/^text\/event-stream/);
    expect(s.events[0]).toMatchObject({
      event: 'start',
      data: { prompt: null, messages: [{ role: 'user', content: 'Summarise: çà et là, ünïcödé (long)' }] },
    });
    const deltas = s.events.filter((e) => e.event === 'delta');
    expect(deltas.length).toBeGreaterThan(3);
    const text = deltas.map((d) => d.data.content).join('');
    expect(text).toBe(`Answer to «Summarise: çà et là, ünïcödé (long)» ✓${' and more'.repeat(40)}`);
    const result = s.events.find((e) => e.event === 'result')!.data;
    expect(result).toMatchObject({ status: 'ok', output: text, tokens_in: 1_200, tokens_out: 345, cost_usd: '0.00645' });
    expect(s.events.at(-1)).toMatchObject({ event: 'done', data: { results: [result] } });
    expect(fast.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const e = await call('GET', `/executions/${result.trace_id}`);
    expect(e.body).toMatchObject({ source: 'playground', cost_usd: 0.00645 });
    expect(e.body.template_usages).toEqual([]);
  });

  it('a key the model echoes never leaves the stream, even cut between chunks', async () => {
    const s = await streamed({ template: 'echo key', connection_ids: [ids.a] });
    const text = s.events
      .filter((e) => e.event === 'delta')
      .map((d) => d.data.content)
      .join('');
    expect(text).toBe('here: [redacted] done');
    const all = JSON.stringify(s.events);
    const secret = API_KEY.slice(3);
    for (let i = 0; i + 4 <= secret.length; i++) expect(all).not.toContain(secret.slice(i, i + 4));
  });

  it('a failing or slow model gives its error beside the others, recorded as a failed execution', async () => {
    const r = await call('POST', '/playground/runs', {
      template: [{ role: 'user', content: 'slow question' }],
      connection_ids: [ids.a, ids.failing],
      timeout_ms: 1_000,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [slow, limited] = r.body.results;
    expect(slow).toMatchObject({ status: 'error', output: null, error: 'model call timed out after 1000 ms', cost_usd: '0' });
    expect(limited).toMatchObject({ status: 'error', error: 'model answered HTTP 429: rate limited, slow down', tokens_in: 0 });
    for (const res of [slow, limited]) {
      const e = await call('GET', `/executions/${res.trace_id}`);
      expect(e.body).toMatchObject({ source: 'playground', status: 'error', error_message: res.error, cost_usd: 0 });
    }
  });

  it('refuses before any call: each problem named', async () => {
    const before = fast.requests.length;
    const cases: Array<[unknown, number, RegExp]> = [
      [{ connection_ids: [ids.a] }, 400, /give a saved prompt or a template/],
      [{ template: 'x', prompt: { prompt_id: 'support' }, connection_ids: [ids.a] }, 400, /not both/],
      [{ template: 'x', connection_ids: [] }, 400, /connection_ids/],
      [{ template: 'x', connection_ids: [ids.a, ids.b, ids.a, ids.b] }, 400, /connection_ids/],
      [{ template: 'x', connection_ids: [ids.a, ids.a] }, 422, /connection_ids\[1\]: repeats connection_ids\[0\]/],
      [{ template: 'x', connection_ids: [ids.a, crypto.randomUUID()] }, 404, /connection_ids\[1\]: model connection/],
      [{ template: 'x', connection_ids: [ids.a, 'not-an-id'] }, 404, /connection_ids\[1\]/],
      [{ template: 'Hi {{name}}', connection_ids: [ids.a] }, 422, /Missing variables: name/],
      [{ prompt: { prompt_id: 'support', version: 7 }, connection_ids: [ids.a] }, 404, /version/i],
      [{ prompt: { prompt_id: 'nope' }, connection_ids: [ids.a] }, 404, /prompt/i],
      [
        { prompt: { prompt_id: 'support' }, variables: { persona: 'p', question: 'q' }, connection_ids: [ids.a] },
        422,
        /placeholders: history/,
      ],
      [{ template: 'x', connection_ids: [ids.a], timeout_ms: 10 }, 400, /timeout_ms/],
    ];
    for (const [body, status, detail] of cases) {
      const r = await call('POST', '/playground/runs', body);
      expect([r.status, r.body.detail], JSON.stringify(body)).toEqual([status, expect.stringMatching(detail)]);
    }
    expect(fast.requests.length).toBe(before);
  });

  it('a budget that blocks refuses the run (402) before any call', async () => {
    const before = fast.requests.length;
    expect((await call('POST', '/executions', { trace_id: 'spent', cost_usd: 5 })).status).toBe(201);
    const put = await call('PUT', '/budget', { budget_monthly_usd: 1, alert_threshold_pct: 80, enforcement_mode: 'block' });
    expect(put.body).toMatchObject({ blocked: true });
    for (const body of [
      { template: 'x', connection_ids: [ids.a] },
      {
        prompt: { prompt_id: 'support' },
        variables: { persona: 'p', question: 'q' },
        placeholders: { history: [] },
        connection_ids: [ids.a],
      },
    ]) {
      const r = await call('POST', '/playground/runs', body);
      expect([r.status, r.body.detail]).toEqual([402, expect.stringMatching(/^Budget exceeded - /)]);
    }
    expect(fast.requests.length).toBe(before);
  });
});
