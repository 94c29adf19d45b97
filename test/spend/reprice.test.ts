// Repricing end to end: a price added, then corrected; the dry run's count and delta equal what
// the job applies, and stats, daily spend and breakdowns move by exactly that delta. Provided
// costs and executions outside the window stay; a second run changes nothing; admin only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromScaled, toScaled } from '../../src/decimal.ts';
import { dropTestDatabases, mode, testEnv } from '../helpers/env.ts';
import { TestIdp } from '../helpers/idp.ts';
import { getJson, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

const idp = new TestIdp();
let svc: TestService;
let adminJwt: string;
let memberJwt: string;
const PROJECT = 'acme-reprice';
const P = `/api/projects/${PROJECT}`;
const WINDOW = { from: '2026-10-01T00:00:00Z', to: '2026-10-08T00:00:00Z' };
const STATS = 'start=2026-10-01T00:00:00Z&end=2026-10-08T00:00:00Z';

const call = (method: string, path: string, body?: unknown, jwt = adminJwt) =>
  getJson(`${svc.url}${P}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${jwt}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const nanos = (usd: number | string) => toScaled(usd, 9);
const usd = (n: bigint) => fromScaled(n, 9);

async function exec(body: Record<string, unknown>) {
  const r = await call('POST', '/executions', { provider: 'acme', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function snapshot() {
  const stats = (await call('GET', `/stats?${STATS}`)).body;
  const byModel = (await call('GET', `/spend?start=${WINDOW.from}&end=${WINDOW.to}&group_by=model`)).body;
  return {
    total: nanos(stats.total_cost),
    day2: nanos(stats.daily_costs.find((d: { date: string }) => d.date === '2026-10-02').cost),
    breakdownTotal: nanos(byModel.total.cost_usd),
    model: (m: string) => nanos(byModel.rows.find((r: { model: string }) => r.model === m)?.cost_usd ?? '0'),
  };
}

/** Applies a reprice and waits for its job; returns the finished job. */
async function apply(body: Record<string, unknown>) {
  const r = await call('POST', '/reprice', body);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  expect(r.body.status).toBe('queued');
  let job: any;
  await until(
    async () => {
      job = (await call('GET', `/reprice/${r.body.id}`)).body;
      return job.status === 'done' || job.status === 'failed';
    },
    'the repricing job',
    30_000,
  );
  expect(job.status, JSON.stringify(job)).toBe('done');
  return job;
}

beforeAll(async () => {
  await idp.start();
  svc = await startTestService({}, { env: await testEnv(idp.env({ AUTH_REQUIRED: 'true', BUDGET_EVAL_DEBOUNCE_MS: '10' })) });
  adminJwt = await idp.token({ sub: 'alice', project_id: PROJECT, role: 'admin' });
  memberJwt = await idp.token({ sub: 'bob', project_id: PROJECT, role: 'member' });
  await exec({ trace_id: 'r1', model: 'rp-model', tokens_in: 1000, tokens_out: 500, started_at: '2026-10-02T10:00:00Z' });
  await exec({ trace_id: 'r2', model: 'rp-model', tokens_in: 1234, tokens_out: 567, started_at: '2026-10-02T11:00:00Z' });
  await exec({ trace_id: 'r3', model: 'rp-model', tokens_in: 1, tokens_out: 1, started_at: '2026-10-05T00:00:00Z' });
  await exec({ trace_id: 'r4', model: 'rp-model', tokens_in: 1000, tokens_out: 1000, cost_usd: 0.5, started_at: '2026-10-02T12:00:00Z' }); // provided: kept
  await exec({ trace_id: 'r5', model: 'rp-model', tokens_in: 1000, tokens_out: 1000, started_at: '2026-10-08T00:00:00Z' }); // outside
  await exec({ trace_id: 'o1', model: 'rp-other', tokens_in: 100, tokens_out: 100, cost_usd: 0.25, started_at: '2026-10-03T00:00:00Z' });
});
afterAll(async () => {
  await svc?.close();
  await idp.stop();
  await dropTestDatabases();
});

describe(`repricing (${mode} mode)`, () => {
  it('is admin only and validates its window', async () => {
    expect((await call('POST', '/reprice', { ...WINDOW, dry_run: true }, memberJwt)).status).toBe(403);
    expect((await call('GET', '/reprice/1', undefined, memberJwt)).status).toBe(403);
    const bad = await call('POST', '/reprice', { from: WINDOW.to, to: WINDOW.from, dry_run: true });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('from');
    expect((await call('POST', '/reprice', { from: 'yesterday', to: WINDOW.to })).status).toBe(400);
    expect((await call('GET', '/reprice/999999')).status).toBe(404);
    expect((await call('GET', '/reprice/nope')).status).toBe(404);
  });

  it('a price added: the dry run equals the applied change, and stats and breakdowns move by exactly that', async () => {
    const none = await call('POST', '/reprice', { ...WINDOW, model: 'rp-model', dry_run: true });
    expect(none.body).toMatchObject({ executions_scanned: 3, executions_changed: 0, spend_delta_usd: '0' });

    expect((await call('PUT', '/models/rp-model', { input_per_mtok: 1, output_per_mtok: 2 })).status).toBe(200);
    const dry = await call('POST', '/reprice', { ...WINDOW, model: 'rp-model', dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    // r1 0.001 + 0.001, r2 0.001234 + 0.001134, r3 0.000001 + 0.000002
    expect(dry.body).toEqual({
      dry_run: true,
      provider: null,
      model: 'rp-model',
      from: '2026-10-01T00:00:00.000Z',
      to: '2026-10-08T00:00:00.000Z',
      executions_scanned: 3,
      executions_changed: 3,
      spend_before_usd: '0',
      spend_after_usd: '0.004371',
      spend_delta_usd: '0.004371',
    });
    const before = await snapshot();
    const job = await apply({ ...WINDOW, model: 'rp-model' });
    expect(job).toMatchObject({
      executions_total: 3,
      executions_scanned: 3,
      executions_changed: 3,
      spend_delta_usd: dry.body.spend_delta_usd,
      requested_by: 'alice',
      error: null,
    });
    const after = await snapshot();
    const delta = nanos(dry.body.spend_delta_usd);
    expect(usd(after.total - before.total)).toBe(usd(delta));
    expect(usd(after.breakdownTotal - before.breakdownTotal)).toBe(usd(delta));
    expect(usd(after.model('rp-model') - before.model('rp-model'))).toBe(usd(delta));
    expect(usd(after.day2 - before.day2)).toBe('0.004368'); // r1 + r2
    expect(after.model('rp-other')).toBe(before.model('rp-other'));
    const r2 = (await call('GET', '/executions/r2')).body;
    expect(r2).toMatchObject({ cost_usd: 0.002368, cost_source: 'computed' });
    expect((await call('GET', '/executions/r4')).body).toMatchObject({ cost_usd: 0.5, cost_source: 'provided' });
    expect((await call('GET', '/executions/r5')).body.cost_source).toBe('unpriced');
    // each execution still counted once
    expect((await call('GET', `/stats?${STATS}`)).body.total_executions).toBe(5);

    const again = await call('POST', '/reprice', { ...WINDOW, dry_run: true });
    expect(again.body).toMatchObject({ executions_changed: 0, spend_delta_usd: '0' });
  });

  it('a price corrected: only the executions it prices change, by the dry run delta', async () => {
    expect((await call('PUT', '/models/rp-model', { input_per_mtok: 2, output_per_mtok: 2 })).status).toBe(200);
    const dry = await call('POST', '/reprice', { ...WINDOW, dry_run: true });
    // new: r1 0.003, r2 0.003602, r3 0.000004 = 0.006606; was 0.004371
    expect(dry.body).toMatchObject({
      executions_scanned: 3,
      executions_changed: 3,
      spend_before_usd: '0.004371',
      spend_after_usd: '0.006606',
      spend_delta_usd: '0.002235',
    });
    const before = await snapshot();
    const job = await apply({ ...WINDOW });
    expect(job).toMatchObject({ executions_changed: 3, spend_delta_usd: '0.002235', model: null });
    const after = await snapshot();
    expect(usd(after.total - before.total)).toBe('0.002235');
    expect(usd(after.breakdownTotal - before.breakdownTotal)).toBe('0.002235');
    expect((await call('GET', `/spend?start=${WINDOW.from}&end=${WINDOW.to}&group_by=model&model=rp-model`)).body.total).toMatchObject({
      cost_usd: '0.506606',
      executions: 4,
    });
  });

  it('OTLP executions are priced again span by span (their traces assembled again): the dry run equals the applied change', async () => {
    const project = 'acme-reprice-otlp';
    const jwt = await idp.token({ sub: 'carol', project_id: project, role: 'admin' });
    const at = (path: string, method = 'GET', body?: unknown) =>
      getJson(`${svc.url}/api/projects/${project}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${jwt}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const trace = 'a0'.repeat(16);
    const start = BigInt(Date.parse('2026-10-03T09:00:00Z')) * 1_000_000n;
    const chat = (id: string, tokensIn: number, tokensOut: number, offset: bigint) => ({
      trace_id: trace,
      span_id: id,
      parent_span_id: '1'.repeat(16),
      span_name: 'chat rpo-model',
      span_kind: 'CLIENT',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'rpo-model',
        'gen_ai.provider.name': 'acme',
        'gen_ai.usage.input_tokens': tokensIn,
        'gen_ai.usage.output_tokens': tokensOut,
      },
      start_time_ns: String(start + offset),
      end_time_ns: String(start + offset + 1_000_000n),
    });
    const spans = [
      {
        trace_id: trace,
        span_id: '1'.repeat(16),
        span_name: 'agent',
        attributes: { 'gen_ai.operation.name': 'invoke_agent' },
        start_time_ns: String(start),
        end_time_ns: String(start + 10_000_000n),
      },
      chat('2'.repeat(16), 1000, 500, 1_000n),
      chat('3'.repeat(16), 2000, 0, 5_000_000n),
    ];
    const sent = await fetch(`${svc.url}/api/v1/traces`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${jwt}`, 'X-Project-Id': project },
      body: JSON.stringify({ spans }),
    });
    expect(sent.status).toBe(200);
    const unpriced = await until(async () => {
      const r = await at(`/executions/${trace}`);
      return r.status === 200 ? r.body : undefined;
    }, 'the trace assembled');
    expect(unpriced).toMatchObject({ cost_usd: 0, cost_source: 'unpriced', tokens_in: 3000, tokens_out: 500 });

    expect((await at('/models/rpo-model', 'PUT', { input_per_mtok: 1, output_per_mtok: 2 })).status).toBe(200);
    const dry = await at('/reprice', 'POST', { ...WINDOW, dry_run: true });
    // 3,000 in × $1/M + 500 out × $2/M, priced per span: 0.0015 + 0.002
    expect(dry.body).toMatchObject({
      executions_scanned: 1,
      executions_changed: 1,
      spend_before_usd: '0',
      spend_after_usd: '0.004',
      spend_delta_usd: '0.004',
    });
    const statsBefore = (await at(`/stats?${STATS}`)).body;
    const started = await at('/reprice', 'POST', { ...WINDOW });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    let job: any;
    await until(
      async () => {
        job = (await at(`/reprice/${started.body.id}`)).body;
        return job.status === 'done' || job.status === 'failed';
      },
      'the repricing job',
      30_000,
    );
    expect(job).toMatchObject({ status: 'done', executions_changed: 1, spend_delta_usd: '0.004' });
    const repriced = await until(async () => {
      const r = (await at(`/executions/${trace}`)).body;
      return r.cost_source === 'computed' ? r : undefined;
    }, 'the correction written');
    expect(repriced).toMatchObject({ cost_usd: 0.004, cost_source: 'computed', tokens_in: 3000, tokens_out: 500 });
    const statsAfter = (await at(`/stats?${STATS}`)).body;
    expect(usd(nanos(statsAfter.total_cost) - nanos(statsBefore.total_cost))).toBe('0.004');
    expect(statsAfter.total_executions).toBe(statsBefore.total_executions); // a correction, not a second execution
    expect((await at('/reprice', 'POST', { ...WINDOW, dry_run: true })).body).toMatchObject({
      executions_changed: 0,
      spend_delta_usd: '0',
    });
  });
});
