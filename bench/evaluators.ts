// Evaluation throughput (issue 28; docs/evaluators.md): N executions recorded, one evaluator
// (concurrency 8, no rate limit in the way) backfilled over them, and the time until every
// judgement is done against the loopback judge (test/helpers/fake-judge.ts), which answers after
// BENCH_JUDGE_LATENCY_MS (default 0: the service's own cost per judgement). Embedded stores.
import { startEmbeddedService, type Figure } from './executions.ts';
import { startFakeJudge, verdict } from '../test/helpers/fake-judge.ts';
import { formatCount } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

export async function benchEvaluators(judgements: number, latencyMs: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  const judge = await startFakeJudge(() => ({ ...verdict(0.8, 'fine'), delayMs: latencyMs }));
  const { svc, dir } = await startEmbeddedService('traceloom-bench-eval-', {
    EVALUATOR_ALLOW_PRIVATE: 'true',
    EVALUATOR_CONCURRENCY: '8',
    EVALUATOR_SCAN_INTERVAL_MS: '3600000', // the backfill queues them all; the scan stays out of the way
  });
  const api = `${svc.url}/api/projects/default`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${api}${path}`, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<any>;
  };
  try {
    await call('POST', '/prompts', {
      prompt_id: 'judge',
      type: 'chat',
      template: [{ role: 'user', content: 'Question: {{input}}\nAnswer: {{output}}\nReply {"score": 0..1, "reasoning": "..."}' }],
      labels: ['production'],
    });
    await call('POST', '/score-configs', { name: 'correctness', data_type: 'NUMERIC', min_value: 0, max_value: 1 });
    const conn = await call('POST', '/model-connections', {
      name: 'judge',
      base_url: judge.baseURL,
      model: 'judge-model',
      api_key: 'sk-bench',
    });
    const start = new Date(Date.now() - 60_000).toISOString();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < judgements; i = next++)
          await call('POST', '/executions', {
            trace_id: `bench-${i}`,
            agent_id: 'bot',
            conversation_history: [
              { role: 'user', content: `question ${i}` },
              { role: 'assistant', content: `answer ${i}` },
            ],
          });
      }),
    );
    await svc.domain.flush();
    const ev = await call('POST', '/evaluators', {
      name: 'bench',
      prompt_id: 'judge',
      connection_id: conn.connection_id,
      score_name: 'correctness',
      target: { kind: 'executions', filter: { agent_id: ['bot'] } },
      concurrency: 8,
      max_calls_per_minute: 100_000,
      paused: true,
    });
    const queued = await call('POST', `/evaluators/${ev.evaluator_id}/backfill`, {
      start,
      end: new Date(Date.now() + 60_000).toISOString(),
    });
    if (queued.queued !== judgements) throw new Error(`backfill queued ${queued.queued} of ${judgements}`);
    const t = performance.now();
    await call('POST', `/evaluators/${ev.evaluator_id}/resume`);
    for (;;) {
      const s = (await call('GET', `/evaluators/${ev.evaluator_id}`)).status;
      if (s.failed > 0) throw new Error(`failed evaluations: ${s.last_error}`);
      if (s.done === judgements) break;
      await new Promise((r) => setTimeout(r, 250)); // the status read shares the stores with the judgements
    }
    const seconds = (performance.now() - t) / 1000;
    figures.push({
      what: `evaluation throughput: ${formatCount(judgements)} judgements, concurrency 8, loopback judge answering in ${latencyMs} ms (score + judge execution each)`,
      value: `${(judgements / seconds).toFixed(1)} judgements/s`,
    });
    if (latencyMs > 0) figures.push({ what: 'judge calls in flight at most (the concurrency achieved)', value: String(judge.maxInFlight) });
  } finally {
    await svc.close();
    await judge.close();
    removeDataDir(dir);
  }
  return figures;
}
