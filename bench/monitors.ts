// Monitor evaluation on one generated tenant (docs/monitors.md, "Cost"): N executions in ONE
// project over 30 days (as bench/executions.ts generates them, inside the engine), a NUMERIC score
// on every 10th, then each kind of monitor evaluated over HTTP (`POST …/monitors/{id}/evaluate`),
// p50 / p95 of BENCH_MONITOR_SAMPLES, beside the executions its windows hold (what a read of the
// primary-key range costs). Env: BENCH_MONITOR_EXECUTIONS (default 10,000,000), BENCH_MONITOR_SAMPLES (5).
import { generateExecutions, GENERATED, startEmbeddedService, type Figure } from './executions.ts';
import { formatCount, quantile, timeEach } from './timing.ts';
import { removeDataDir } from './data-dir.ts';
import type { Service } from '../src/service.ts';

const END = new Date('2026-11-01T00:00:00.000Z');
const STARTED_AT = "toDateTime64('2026-11-01 00:00:00', 3, 'UTC') - toIntervalMillisecond((number * 7919) % (30 * 86400000))";

const MONITORS = [
  {
    what: 'error_rate, change vs previous window (two-proportion z), 60 min, one agent',
    body: { metric: { kind: 'error_rate' }, filter: { agent_id: ['agent-3'] }, window_minutes: 60, condition: { kind: 'change' } },
    windows: 2,
  },
  {
    what: 'latency_p95, change vs previous window (share above p95), 60 min',
    body: { metric: { kind: 'latency_p95' }, window_minutes: 60, condition: { kind: 'change' } },
    windows: 2,
  },
  {
    what: 'cost_per_execution, change vs previous window (Welch), 24 h, one provider',
    body: { metric: { kind: 'cost_per_execution' }, filter: { provider: ['openai'] }, window_minutes: 1440, condition: { kind: 'change' } },
    windows: 2,
  },
  {
    what: 'score_mean accuracy < 0.4, 60 min',
    body: {
      metric: { kind: 'score_mean', score_name: 'accuracy' },
      window_minutes: 60,
      condition: { kind: 'threshold', op: '<', value: 0.4 },
    },
    windows: 1,
  },
  {
    what: 'executions_count < 1000, 7 days',
    body: { metric: { kind: 'executions_count' }, window_minutes: 10080, condition: { kind: 'threshold', op: '<', value: 1000 } },
    windows: 1,
  },
];

export async function benchMonitors(rows: number, samples: number): Promise<Figure[]> {
  const { svc, dir } = await startEmbeddedService('traceloom-bench-monitors-');
  const figures: Figure[] = [];
  try {
    const ch = svc.stores.clickhouse;
    const t = performance.now();
    await generateExecutions(ch, rows, { project: 'default', startedAt: STARTED_AT });
    await ch.command(
      `INSERT INTO scores (project_id, trace_id, id, version, sign, span_id, session_id, name, data_type, value, label, comment, source, author,
         config_id, created_at, updated_at)
       SELECT 'default', ${GENERATED.traceId}, concat('s-', toString(number)), 1, 1, '', '', 'accuracy', 'NUMERIC', (number % 100) / 100, '', '',
         'eval', 'bench', '', ${STARTED_AT} AS at, at
       FROM numbers(0, ${rows}) WHERE number % 10 = 0`,
    );
    figures.push({
      what: `generated ${formatCount(rows)} executions (30 days, one project) and ${formatCount(rows / 10)} scores`,
      value: `${((performance.now() - t) / 1000).toFixed(1)} s`,
    });
    figures.push(...(await timeMonitors(svc, END, samples)));
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}

/**
 * Each kind of monitor created (disabled) and evaluated over HTTP with its windows ending at `end`
 * (the spend clock is set there): p50 / p95 of `samples`, beside the rows its windows' key range
 * holds. Shared with the tenant bench (bench/tenant.ts), which evaluates them at each step.
 */
export async function timeMonitors(svc: Service, end: Date, samples: number, prefix = 'bench'): Promise<Figure[]> {
  const figures: Figure[] = [];
  const ch = svc.stores.clickhouse;
  svc.domain.spend.clock.now = () => end;
  const base = `${svc.url}/api/projects/default`;
  for (const [i, m] of MONITORS.entries()) {
    const res = await fetch(`${base}/monitors`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `${prefix}-${i}`, enabled: false, ...m.body }),
    });
    const created = (await res.json()) as { monitor_id: string; detail?: string };
    if (res.status !== 201) throw new Error(`monitor ${m.what}: ${res.status} ${created.detail}`);
    let last: { evaluation: { current: { n: number }; reason: string } } | undefined;
    const { samples: times } = await timeEach(samples, async () => {
      const r = await fetch(`${base}/monitors/${created.monitor_id}/evaluate`, { method: 'POST' });
      last = (await r.json()) as typeof last;
    });
    // The rows a window's primary-key range holds (every execution of the project in it, before the filter).
    const [inWindow] = await ch.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM executions WHERE project_id = 'default'
         AND started_at >= toDateTime64({s:String}, 3, 'UTC') AND started_at < toDateTime64({e:String}, 3, 'UTC')`,
      {
        s: new Date(end.getTime() - m.windows * m.body.window_minutes * 60_000).toISOString().replace('T', ' ').replace('Z', ''),
        e: end.toISOString().replace('T', ' ').replace('Z', ''),
      },
    );
    figures.push({
      what: `monitor ${m.what}: p50 / p95 of ${samples} (rows in its key range; n of the current window)`,
      value: `${quantile(times, 0.5).toFixed(1)} / ${quantile(times, 0.95).toFixed(1)} ms (${formatCount(Number(inWindow?.n ?? 0))} rows; n=${formatCount(last?.evaluation.current.n ?? 0)})`,
    });
  }
  return figures;
}
