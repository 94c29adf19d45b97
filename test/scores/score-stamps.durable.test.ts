// Score stamps that wait on nothing held in memory (docs/scores.md, "Storage"): a score written
// shortly before its execution joins the execution's group at once, not at the restamp's second
// look; a score whose restamp never ran (the in-memory queue held it: a score from an evaluation
// event, stored before its trace was assembled) is found by the stamp sweep, periodically and at the
// next start after a kill -9, and shows in the version comparison.
import { afterAll, describe, expect, it } from 'vitest';
import { dropTestDatabases, mode, tempDir, testEnv } from '../helpers/env.ts';
import { getJson, startTestService } from '../helpers/service.ts';
import { startChild } from '../helpers/child.ts';
import { agentTrace } from '../helpers/ingest-log.ts';
import { until } from '../helpers/wait.ts';

afterAll(() => dropTestDatabases());

const hex = (n: number, t: number) => t.toString(16).padStart(n, '0');
const caller = (url: string) => (method: string, path: string, body?: unknown) =>
  getJson(`${url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** A chat span of prompt `promptId` v1 carrying an evaluation event: a score stored at ingest, before its trace is assembled. */
function evaluatedChat(traceId: string, promptId: string, value: number): string {
  const now = BigInt(Date.now()) * 1_000_000n;
  return JSON.stringify({
    spans: [
      {
        trace_id: traceId,
        span_id: traceId.slice(0, 16),
        span_name: 'chat gpt-4o',
        span_kind: 'CLIENT',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.usage.output_tokens': 10,
          'traceloom.prompt.id': promptId,
          'traceloom.prompt.version': 1,
        },
        start_time_ns: String(now),
        end_time_ns: String(now + 1_000_000n),
        events: [
          {
            name: 'gen_ai.evaluation.result',
            time_ns: String(now),
            attributes: { 'gen_ai.evaluation.name': 'helpful', 'gen_ai.evaluation.score.value': value },
          },
        ],
      },
    ],
  });
}

/** The comparison's `helpful` score of version 1 (n), or 0 when it has none. */
async function comparedScores(call: ReturnType<typeof caller>, promptId: string): Promise<number> {
  const r = await call('GET', `/prompts/${promptId}/compare?versions=1,2&scores=helpful`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return Number(r.body.groups[0].scores.helpful?.n ?? 0);
}

async function promptWithTwoVersions(call: ReturnType<typeof caller>, promptId: string): Promise<void> {
  expect((await call('POST', '/prompts', { prompt_id: promptId, type: 'text', template: 'v1 {{x}}' })).status).toBe(201);
  expect((await call('POST', '/prompts/' + promptId + '/versions', { template: 'v2 {{x}}' })).status).toBe(201);
}

async function ingest(url: string, body: string): Promise<void> {
  const r = await getJson(`${url}/api/v1/traces`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

describe(`score stamps that survive what memory loses (${mode} mode)`, () => {
  it('a score written just before its execution joins its group at once, not at the second look', async () => {
    // The second look is an hour away and the sweep too: only the immediate restamp can stamp it.
    const svc = await startTestService({ SCORE_STAMP_AGAIN_MS: '3600000', SCORE_STAMP_SWEEP_MS: '3600000', TRACE_DEBOUNCE_MS: '50' });
    try {
      const call = caller(svc.url);
      const t = 0x5a0001;
      expect((await call('POST', '/scores', { trace_id: hex(32, t), name: 'early', value: 0.25 })).status).toBe(201);
      await ingest(svc.url, JSON.stringify({ spans: agentTrace(t) }));
      const scored = await until(
        async () => {
          const r = await call('GET', '/spend?group_by=model&scores=early&window=2d');
          return (r.body.rows as Array<{ model: string; scores: Record<string, { n: number }> }>).find((x) => x.scores.early)?.scores.early;
        },
        'the score in its execution group',
        20_000,
      );
      expect(scored).toMatchObject({ n: 1, scored_executions: 1, mean: 0.25 });
    } finally {
      await svc.close();
    }
  });

  it('the periodic sweep stamps a score whose restamp never ran', async () => {
    // The in-memory restamp is an hour away: the sweep (every 300 ms) is what stamps the score.
    const svc = await startTestService({ SCORE_STAMP_DELAY_MS: '600000', SCORE_STAMP_SWEEP_MS: '300', TRACE_DEBOUNCE_MS: '50' });
    try {
      const call = caller(svc.url);
      await promptWithTwoVersions(call, 'swept');
      await ingest(svc.url, evaluatedChat('5a'.repeat(16), 'swept', 0.75));
      expect(await until(async () => (await comparedScores(call, 'swept')) || undefined, 'the swept score in compare', 30_000)).toBe(1);
      // Stamped with its prompt: nothing stale is left for a restamp (or the next sweep) to write.
      expect(await svc.domain.scores.service.restamp('default', ['5a'.repeat(16)])).toBe(0);
    } finally {
      await svc.close();
    }
  });

  it(
    'a score from an evaluation event whose restamp died with a kill -9 is in compare after the restart',
    { timeout: 180_000 },
    async () => {
      const t = await testEnv({ SCORE_STAMP_DELAY_MS: '600000', SCORE_STAMP_SWEEP_MS: '3600000', TRACE_DEBOUNCE_MS: '50' });
      const chdbDir = tempDir('traceloom-stamps-chdb-');
      let svc = await startChild(t.env, { chdbDir });
      const traceId = '6b'.repeat(16);
      try {
        let call = caller(svc.url);
        await promptWithTwoVersions(call, 'killed');
        await ingest(svc.url, evaluatedChat(traceId, 'killed', 0.5));
        // Stored: the score (at ingest) and then the execution; the score is not stamped yet.
        await until(async () => (await call('GET', `/executions/${traceId}`)).status === 200, 'the execution', 30_000);
        expect((await call('GET', `/scores?trace_id=${traceId}`)).body.items).toHaveLength(1);
        expect(await comparedScores(call, 'killed')).toBe(0);
        svc.child.kill('SIGKILL');
        await svc.exited;

        svc = await startChild(t.env, { chdbDir });
        call = caller(svc.url);
        expect(
          await until(async () => (await comparedScores(call, 'killed')) || undefined, 'the score in compare after the restart', 30_000),
        ).toBe(1);
        const r = await call('GET', '/prompts/killed/compare?versions=1,2&scores=helpful');
        expect(r.body.groups[0].scores.helpful).toMatchObject({ n: 1, scored_executions: 1, mean: 0.5 });
      } finally {
        svc.child.kill('SIGKILL');
        await svc.exited;
      }
    },
  );
});
