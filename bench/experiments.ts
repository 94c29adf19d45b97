// Experiment throughput (issue 42; docs/datasets.md, "Experiments run by the service"): a dataset
// of N items, one experiment at concurrency 8 against a loopback model that answers at once
// (test/helpers/fake-judge.ts), and the time from its creation to its end — with deterministic
// checks only, then with one LLM judge as well. The raw figure of the same run: the loopback model
// called directly by this process, 8 at a time (what the service adds is the difference).
// Embedded stores.
import { startEmbeddedService, type Figure } from './executions.ts';
import { startFakeJudge, verdict } from '../test/helpers/fake-judge.ts';
import { formatCount } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

export async function benchExperiments(items: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  const model = await startFakeJudge((req) => ({ kind: 'judgement', content: /n=(\d+)/.exec(req.text)?.[1] ?? '0' }), 'bench-model');
  const judge = await startFakeJudge(() => verdict(1, 'fine'), 'judge-model');
  const { svc, dir } = await startEmbeddedService('traceloom-bench-experiments-', {
    EVALUATOR_ALLOW_PRIVATE: 'true',
    EXPERIMENT_SCAN_INTERVAL_MS: '3600000', // created experiments are queued at once; the scan stays out of the way
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
    // raw: the model alone, 8 calls at a time from this process
    const raw = Math.min(items, 2_000);
    let next = 0;
    let t = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < raw; i = next++)
          await fetch(`${model.baseURL}/chat/completions`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: `n=${i}` }] }),
          }).then((r) => r.text());
      }),
    );
    figures.push({
      what: `raw: the loopback model called directly, ${formatCount(raw)} calls, 8 at a time`,
      value: `${(raw / ((performance.now() - t) / 1000)).toFixed(0)} calls/s`,
    });

    await call('POST', '/prompts', { prompt_id: 'echo', type: 'text', template: 'Say n={{n}}', labels: ['production'] });
    await call('POST', '/prompts', {
      prompt_id: 'judge',
      type: 'text',
      template: 'Question: {{input}}\nAnswer: {{output}}\nExpected: {{expected_output}}',
      labels: ['production'],
    });
    await call('POST', '/score-configs', { name: 'correct', data_type: 'NUMERIC', min_value: 0, max_value: 1 });
    const conn = await call('POST', '/model-connections', {
      name: 'model',
      base_url: model.baseURL,
      model: 'bench-model',
      api_key: 'sk-bench',
    });
    const judgeConn = await call('POST', '/model-connections', {
      name: 'judge',
      base_url: judge.baseURL,
      model: 'judge-model',
      api_key: 'sk-bench-judge',
    });
    const ev = await call('POST', '/evaluators', {
      name: 'correct',
      prompt_id: 'judge',
      connection_id: judgeConn.connection_id,
      score_name: 'correct',
      target: { kind: 'executions', filter: { agent_id: ['nobody'] } },
      concurrency: 8,
      max_calls_per_minute: 100_000,
    });
    const ds = await call('POST', '/datasets', { name: 'bench' });
    for (let i = 0; i < items; i += 1_000)
      await call(
        'POST',
        `/datasets/${ds.dataset_id}/items`,
        Array.from({ length: Math.min(1_000, items - i) }, (_, k) => ({ input: { n: i + k }, expected_output: String(i + k) })),
      );

    for (const [label, extra] of [
      ['two checks (exact_match, regex)', {}],
      ['two checks and one LLM judge', { evaluator_ids: [ev.evaluator_id] }],
    ] as const) {
      t = performance.now();
      const e = await call('POST', `/datasets/${ds.dataset_id}/experiments`, {
        name: label,
        prompt: { prompt_id: 'echo' },
        connection_id: conn.connection_id,
        checks: [{ kind: 'exact_match' }, { kind: 'regex', pattern: '^\\d+$' }],
        concurrency: 8,
        ...extra,
      });
      let state;
      for (;;) {
        state = await call('GET', `/datasets/${ds.dataset_id}/experiments/${e.experiment_id}`);
        if (!['queued', 'running'].includes(state.status)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - t) / 1000;
      if (state.status !== 'done' || state.progress.done !== items) throw new Error(`experiment ended ${JSON.stringify(state)}`);
      figures.push({
        what: `experiment throughput: ${formatCount(items)} items, concurrency 8, instant model, ${label}`,
        value: `${(items / seconds).toFixed(1)} items/s (${seconds.toFixed(1)} s)`,
      });
    }
  } finally {
    await svc.close();
    await model.close();
    await judge.close();
    removeDataDir(dir);
  }
  return figures;
}
