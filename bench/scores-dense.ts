// Score writes on dense traces (issue 39, defect 1; docs/scores.md, "Storage"): 8 clients post
// batches of 1,000 new scores over the same 400 traces (evaluators re-judging), so every batch
// lands on traces that already hold thousands of scores. Measured: the API's GET /api/health
// latency and the event loop's lag during the load, and scores stored per second; beside it, in
// the same run, the same load spread over 200,000 traces (each trace holds a few scores): the raw
// figure a dense load should match. The service runs in this process on the embedded stores; the
// clients and the health prober run in a child process.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startEmbeddedService, type Figure } from './executions.ts';
import { formatCount, quantile, runJsonChild } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

interface LoadResult {
  stored: number;
  batches: number;
  errors: Record<string, number>;
  seconds: number;
  probes: number[];
}

const runLoad = (url: string, traces: number, clients: number, seconds: number) =>
  runJsonChild<LoadResult>('bench/scores-dense-load.ts', [url, String(traces), String(clients), String(seconds)]);

export async function benchScoresDense(seconds: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const traces of [400, 200_000]) {
    const { svc, dir } = await startEmbeddedService('traceloom-bench-dense-');
    try {
      // The first 400 traces' executions exist (their scores are stamped as they are written).
      for (let i = 0; i < 400; i++) {
        const r = await fetch(`${svc.url}/api/projects/default/executions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ trace_id: `de${i.toString(16).padStart(30, '0')}`, model: 'gpt-4o', provider: 'openai', cost_usd: 0.001 }),
        });
        if (r.status !== 201) throw new Error(`executions: ${r.status} ${await r.text()}`);
      }
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      const load = await runLoad(svc.url, traces, 8, seconds);
      lag.disable();
      await svc.domain.flush();
      const probes = [...load.probes].sort((a, b) => a - b);
      const errors = Object.entries(load.errors)
        .map(([s, n]) => `${n} × ${s}`)
        .join(', ');
      const label = traces === 400 ? 'dense: 400 traces' : 'spread: 200,000 traces (raw figure)';
      figures.push(
        {
          what: `${label}: scores stored per second (8 clients, batches of 1,000, ${seconds} s)`,
          value: formatCount(load.stored / load.seconds),
        },
        {
          what: `${label}: scores per trace at the end`,
          value: (load.stored / traces).toFixed(1),
        },
        {
          what: `${label}: GET /api/health p50 / p99 / max (${probes.length} probes)`,
          value: `${quantile(probes, 0.5).toFixed(1)} / ${quantile(probes, 0.99).toFixed(1)} / ${probes[probes.length - 1]!.toFixed(1)} ms`,
        },
        {
          what: `${label}: event-loop lag p99 / max`,
          value: `${(lag.percentile(99) / 1e6).toFixed(0)} / ${(lag.max / 1e6).toFixed(0)} ms`,
        },
        { what: `${label}: answers other than 201`, value: errors || 'none' },
      );
    } finally {
      await svc.close();
      removeDataDir(dir);
    }
  }
  return figures;
}
