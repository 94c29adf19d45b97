// Score writes on traces that already hold many scores (evaluators re-judging, annotators
// correcting: docs/scores.md, "Storage") cost what they write, not what the traces hold: while
// clients post batches over the same few traces, each holding thousands of scores, the process
// keeps serving (its event loop is never held for long) and every count stays exact. The timings
// under the full load are measured by `npm run bench scores-dense` (BENCHMARKS.md).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { getJson, serviceForFile } from '../helpers/service.ts';
import { agentTrace } from '../helpers/ingest-log.ts';
import { until } from '../helpers/wait.ts';

const service = serviceForFile({ TRACE_DEBOUNCE_MS: '50' });

const TRACES = 20;
const hex = (n: number, t: number) => t.toString(16).padStart(n, '0');
const traceIds = Array.from({ length: TRACES }, (_x, i) => hex(32, 0xde0000 + i));
const call = (method: string, path: string, body?: unknown) =>
  getJson(`${service().url}/api/projects/default${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

let written = 0;
/** A batch of 1,000 new scores named `judge` spread over the same traces. */
const batch = () =>
  Array.from({ length: 1_000 }, (_x, i) => ({
    trace_id: traceIds[(written + i) % TRACES],
    name: 'judge',
    value: ((written + i) % 10) / 10,
  }));
async function post(n: number, clients: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (left-- > 0) {
        const scores = batch();
        written += scores.length;
        const r = await call('POST', '/scores', scores);
        expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(201);
      }
    }),
  );
}

describe(`score writes on dense traces (${mode} mode)`, () => {
  it(
    'batches over traces holding thousands of scores each hold the event loop briefly; counts stay exact',
    { timeout: 180_000 },
    async () => {
      const r = await fetch(`${service().url}/api/v1/traces`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ spans: traceIds.flatMap((_t, i) => agentTrace(0xde0000 + i)) }),
      });
      expect(r.status).toBe(200);
      await until(async () => (await call('GET', '/executions?limit=100')).body.items.length === TRACES, 'the executions');
      // 40,000 scores: 2,000 on each trace.
      await post(40, 4);

      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      const health: number[] = [];
      let probing = true;
      const prober = (async () => {
        while (probing) {
          const t0 = performance.now();
          await fetch(`${service().url}/api/health`).then((x) => x.arrayBuffer());
          health.push(performance.now() - t0);
          await new Promise((res) => setTimeout(res, 20));
        }
      })();
      await post(20, 4);
      probing = false;
      await prober;
      lag.disable();
      const maxLagMs = lag.max / 1e6;
      health.sort((a, b) => a - b);
      console.log(
        `dense scores: event-loop lag max ${maxLagMs.toFixed(0)} ms, p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms; health p99 ${health[Math.floor(health.length * 0.99)]!.toFixed(0)} ms over ${health.length}`,
      );
      // No write holds the event loop for a round's worth of stored scores (they took seconds).
      expect(maxLagMs).toBeLessThan(1_000);

      // Exact: 60,000 scores, one execution scored per trace.
      await service().domain.flush();
      const spend = await call('GET', '/spend?group_by=model&scores=judge&window=2d');
      expect(spend.status).toBe(200);
      expect(spend.body.total_scores.judge).toMatchObject({ n: 60_000, scored_executions: TRACES });
    },
  );
});
