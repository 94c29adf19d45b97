// One very large tenant (issue "A very large tenant"): N executions in ONE project, generated inside
// the engine through the same materialized views as real writes (100,000 users, 12 models, 20 agents,
// a session per 10 executions, metadata, two prompt versions, 2 scores per 10th execution, 90 days),
// then each answer over HTTP, p50 / p95 of 10, at each N in turn (10M, 50M, 100M: rows are added to
// those of the step before). Beside each spend breakdown, the same breakdown read from the hourly
// rollup as every breakdown was read before the rollups by grain (a raw figure of the same run), and
// the exact-sum check: the answer's total against a plain sum over `executions FINAL`.
// Env: BENCH_TENANT_EXECUTIONS (comma-separated steps), BENCH_TENANT_DIR (a DATA_DIR kept between
// runs: rows already there are not generated again), BENCH_TENANT_SAMPLES (default 10),
// BENCH_TENANT_FINANCE (default 1; 0 skips the reconciliation and statements of October: bench/finance.ts).
import os from 'node:os';
import type { Service } from '../src/service.ts';
import { breakdownSql } from '../src/reads/breakdown-sql.ts';
import { GENERATED, generateExecutions, startEmbeddedService } from './executions.ts';
import { formatCount, quantile, timeEach, waitUntil } from './timing.ts';
import { removeDataDir } from './data-dir.ts';
import { timeMonitors } from './monitors.ts';
import { timeFinance } from './finance.ts';

const WINDOW_90 = 'start=2026-08-03T00:00:00Z&end=2026-11-01T00:00:00Z';
const WINDOW_30 = 'start=2026-10-01T00:00:00Z&end=2026-10-31T00:00:00Z';
const ms = (n: number) => n.toFixed(0);

interface Answer {
  what: string;
  path: string;
  /** the same spend breakdown from the hourly rollup (group columns, filter), timed in process */
  hourly?: { groups: string[]; table: string };
}

const ANSWERS: Answer[] = [
  { what: 'list page 1 with total, no filter', path: '/executions?limit=50' },
  {
    what: 'list page 1 with total, provider + 45 days',
    path: '/executions?limit=50&provider=openai,anthropic&start=2026-09-01T00:00:00Z&end=2026-10-15T00:00:00Z',
  },
  { what: "list, one user's executions", path: '/executions?limit=50&user_id=user-4242' },
  { what: "list, one session's executions", path: '/executions?limit=50&session_id=s-4242' },
  { what: 'detail by trace id', path: '/executions/tr-4242' },
  { what: 'stats, 30 days', path: `/stats?${WINDOW_30}` },
  { what: 'stats, 90 days', path: `/stats?${WINDOW_90}` },
  { what: 'template analytics, 30 days', path: `/prompts/support/analytics?${WINDOW_30}` },
  { what: 'compare versions 1 and 2, 90 days, with scores', path: `/prompts/support/compare?versions=1,2&${WINDOW_90}` },
  { what: 'users, 30 days', path: `/users?${WINDOW_30}` },
  { what: 'users, 30 days from 07:30 (partial days at both ends)', path: '/users?start=2026-10-01T07:30:00Z&end=2026-10-31T07:30:00Z' },
  { what: 'sessions, 30 days', path: `/sessions?${WINDOW_30}` },
  { what: 'spend by model, 90 days', path: `/spend?group_by=model&${WINDOW_90}`, hourly: { groups: ['model'], table: 'spend_hourly' } },
  {
    what: 'spend by provider, 90 days',
    path: `/spend?group_by=provider&${WINDOW_90}`,
    hourly: { groups: ['provider'], table: 'spend_hourly' },
  },
  { what: 'spend by agent, 90 days', path: `/spend?group_by=agent&${WINDOW_90}`, hourly: { groups: ['agent_id'], table: 'spend_hourly' } },
  { what: 'spend by day, 90 days', path: `/spend?group_by=day&${WINDOW_90}&limit=100`, hourly: { groups: ['day'], table: 'spend_hourly' } },
  {
    what: 'spend by day × model, 30 days',
    path: `/spend?group_by=day,model&${WINDOW_30}`,
    hourly: { groups: ['day', 'model'], table: 'spend_hourly' },
  },
  { what: 'spend by tag, 90 days', path: `/spend?group_by=tag&${WINDOW_90}` },
  { what: 'spend by prompt, 90 days', path: `/spend?group_by=prompt&${WINDOW_90}` },
  { what: 'spend by environment, 90 days', path: `/spend?group_by=environment&${WINDOW_90}` },
  { what: 'spend by user, 90 days', path: `/spend?group_by=user&${WINDOW_90}`, hourly: { groups: ['user_id'], table: 'spend_hourly' } },
  {
    what: 'spend by model × user, 90 days',
    path: `/spend?group_by=model,user&${WINDOW_90}`,
    hourly: { groups: ['model', 'user_id'], table: 'spend_hourly' },
  },
  {
    what: 'spend by session, 90 days',
    path: `/spend?group_by=session&${WINDOW_90}`,
    hourly: { groups: ['session_id'], table: 'spend_hourly' },
  },
  { what: 'spend by metadata.customer, 90 days', path: `/spend?group_by=metadata.customer&${WINDOW_90}` },
  { what: 'spend by day, 90 days, metadata.customer=c-42', path: `/spend?group_by=day&metadata.customer=c-42&${WINDOW_90}&limit=100` },
  { what: 'spend by model, 90 days, scores=accuracy,resolved', path: `/spend?group_by=model&scores=accuracy,resolved&${WINDOW_90}` },
  { what: 'spend by user, 90 days, scores=accuracy', path: `/spend?group_by=user&scores=accuracy&${WINDOW_90}` },
];

/**
 * The rows of a step [from, to) arrive in time order over the 90 days, as a tenant's traffic does
 * (each insert block spans hours, not the whole window), while every user is active all along:
 * user (number × 7919) mod 100,000 cycles through every user each 100,000 executions.
 */
const stepOf = (from: number, to: number) => ({
  startedAt: `toDateTime64('2026-08-03 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv((number - ${from}) * ${90 * 86_400_000}, ${to - from}))`,
  userId: "concat('user-', toString((number * 7919) % 100000))",
});

/** 2 scores (accuracy, resolved) of every 10th execution in [from, to), stamped as its live execution. */
async function generateScores(svc: Service, from: number, to: number): Promise<void> {
  const step = stepOf(from, to);
  const rows = to - from;
  const g = GENERATED;
  const uses = g.usesPrompt;
  const chunk = 10_000_000;
  for (let offset = from; offset < from + rows; offset += chunk) {
    await svc.stores.clickhouse.command(
      `INSERT INTO scores (project_id, trace_id, id, version, sign, span_id, session_id, name, data_type, value, label, comment, source, author, config_id, created_at, updated_at,
         counted, exec_version, exec_hour, exec_provider, exec_model, exec_agent_id, exec_user_id, exec_session_id, exec_prompt_ids, exec_prompt_versions, exec_prompt_refs)
       SELECT 'default', ${g.traceId}, concat('s-', toString(number), '-', n.2),
         1, 1, '', '', n.2, n.1, n.3, if(n.1 = 'BOOLEAN', if(n.3 = 1, 'true', 'false'), ''), '', 'eval', 'bench', '',
         ${step.startedAt} AS at, at,
         1, 1, toStartOfHour(at, 'UTC'), ${g.provider}, ${g.model}, ${g.agentId}, ${step.userId},
         concat('s-', toString(intDiv(number, 10))),
         if(${uses}, ['support'], []), if(${uses}, [toUInt32(${g.version([1, 2])})], []), if(${uses}, ['latest'], [])
       FROM numbers(${offset}, ${Math.min(chunk, from + rows - offset)})
       ARRAY JOIN [('NUMERIC', 'accuracy', (number % 100) / 100), ('BOOLEAN', 'resolved', toFloat64((number % 10) < 7))] AS n
       WHERE number % 10 = 0`,
    );
  }
}

async function timeAnswer(url: string, n: number): Promise<{ p50: number; p95: number; body: string }> {
  let body = '';
  const get = async () => {
    const r = await fetch(url);
    body = await r.text();
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${body}`);
  };
  await get();
  const { samples } = await timeEach(n, get);
  return { p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), body };
}

export async function benchTenant(): Promise<void> {
  const steps = (process.env.BENCH_TENANT_EXECUTIONS ?? '10000000,50000000,100000000').split(',').map(Number);
  const samples = Number(process.env.BENCH_TENANT_SAMPLES ?? 10);
  const kept = process.env.BENCH_TENANT_DIR;
  const { svc, dir } = await startEmbeddedService('traceloom-bench-tenant-', {}, kept);
  const ch = svc.stores.clickhouse;
  const api = `${svc.url}/api/projects/default`;
  const call = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(url, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status >= 400 && r.status !== 409) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
  };
  await call('POST', `${api}/prompts`, { prompt_id: 'support', type: 'text', template: 'v1' });
  await call('POST', `${api}/prompts/support/versions`, { template: 'v2' }).catch(() => undefined);

  const columns = new Map<number, Map<string, string>>();
  const put = (n: number, what: string, value: string) => {
    if (!columns.has(n)) columns.set(n, new Map());
    columns.get(n)!.set(what, value);
  };
  try {
    for (const n of steps) {
      const [{ have }] = (await ch.query<{ have: string }>(
        "SELECT toString(count()) AS have FROM executions WHERE project_id = 'default' AND sign = 1",
      )) as [{ have: string }];
      const from = Number(have);
      if (from < n) {
        const t0 = performance.now();
        await generateExecutions(ch, n - from, {
          project: 'default',
          attribution: true,
          sessions: true,
          promptVersions: [1, 2],
          from,
          ...stepOf(from, n),
        });
        const t1 = performance.now();
        await generateScores(svc, from, n);
        put(
          n,
          'generated (executions, then scores)',
          `${((t1 - t0) / 1000).toFixed(0)} s + ${((performance.now() - t1) / 1000).toFixed(0)} s`,
        );
      } else put(n, 'generated (executions, then scores)', from > n ? `(kept: ${formatCount(from)} stored)` : '(kept)');
      // Timed beside whatever merges are still running after 120 s: a busy tenant's parts are not all merged.
      const t2 = performance.now();
      const settled = await waitUntil(
        async () => Number((await ch.query<{ n: string }>('SELECT count() AS n FROM system.merges'))[0]!.n) === 0,
        120_000,
        1_000,
      );
      put(n, 'merges settled before timing', `${((performance.now() - t2) / 1000).toFixed(0)} s${settled ? '' : ' (still merging)'}`);

      for (const a of ANSWERS) {
        const t = await timeAnswer(`${api}${a.path}`, samples);
        let value = `${ms(t.p50)} / ${ms(t.p95)}`;
        if (a.hourly) {
          const q = new URLSearchParams(a.path.split('?')[1]);
          const bucket = a.hourly.groups.includes('day') ? 'day' : undefined;
          const sql = breakdownSql(
            {
              projectId: 'default',
              source: a.hourly.table as 'spend_hourly',
              start: q.get('start')!.slice(0, 19).replace('T', ' '),
              end: q.get('end')!.slice(0, 19).replace('T', ' '),
              groups: a.hourly.groups.map((c) =>
                c === 'day' ? { kind: 'time' as const, bucket: bucket! } : { kind: 'column' as const, column: c as 'model' },
              ),
              filter: { anyOf: {}, metadata: {} },
              limit: 100,
            },
            {
              from: `FROM ${a.hourly.table}`,
              hour: 'hour',
              measures:
                'sum(cost_usd) AS c, sum(executions) AS n, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(unpriced_executions) AS u',
            },
          );
          const raw = (await timeEach(Math.min(samples, 5), () => ch.query(sql.text, sql.params))).samples;
          value += ` (hourly rollup ${ms(quantile(raw, 0.5))})`;
        }
        if (a.path.startsWith('/spend?') && !a.path.includes('scores=')) {
          const answer = JSON.parse(t.body) as { total: { cost_usd: string; executions: number }; groups: number; source: string };
          value += ` · ${formatCount(answer.groups)} groups`;
          if (!a.path.includes('tag') && !a.path.includes('prompt')) {
            const q = new URLSearchParams(a.path.split('?')[1]);
            // the answer's metadata filters, applied to the plain sum too
            const metadata = [...q.entries()].filter(([k]) => k.startsWith('metadata.'));
            const [exact] = await ch.query<{ cost: string; n: string }>(
              `SELECT toString(sum(cost_usd)) AS cost, toString(count()) AS n FROM executions FINAL
               WHERE project_id = 'default' AND sign = 1 AND started_at >= {s:DateTime64(3, 'UTC')} AND started_at < {e:DateTime64(3, 'UTC')}
                 ${metadata.map((_, i) => `AND metadata[{mk${i}:String}] = {mv${i}:String}`).join(' ')}`,
              {
                s: q.get('start')!.slice(0, 19).replace('T', ' '),
                e: q.get('end')!.slice(0, 19).replace('T', ' '),
                ...Object.fromEntries(
                  metadata.flatMap(([k, v], i) => [
                    [`mk${i}`, k.slice('metadata.'.length)],
                    [`mv${i}`, v],
                  ]),
                ),
              },
            );
            const same =
              Number(exact!.cost) === Number(answer.total.cost_usd) &&
              exact!.cost.replace(/\.?0+$/, '') === answer.total.cost_usd.replace(/\.?0+$/, '');
            value +=
              same && Number(exact!.n) === answer.total.executions ? ' · exact' : ` · DIFFERS: ${answer.total.cost_usd} vs ${exact!.cost}`;
          }
        }
        put(n, a.what, value);
      }
      // Monitors (issue 42): each kind evaluated with its windows ending where the data ends.
      for (const f of await timeMonitors(svc, new Date('2026-11-01T00:00:00Z'), samples, `tenant-${n}-${Date.now()}`))
        put(n, f.what, f.value);
      // Finance (issue 44): an invoice of October reconciled, and its chargeback statements.
      if (process.env.BENCH_TENANT_FINANCE !== '0') for (const f of await timeFinance(svc, '2026-10', samples)) put(n, f.what, f.value);
      const parts = await ch.query<{ table: string; bytes: string; rows: string; parts: string }>(
        `SELECT table, toString(sum(bytes_on_disk)) AS bytes, toString(sum(rows)) AS rows, toString(count()) AS parts
         FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table ORDER BY sum(bytes_on_disk) DESC`,
      );
      for (const p of parts.slice(0, 14))
        put(
          n,
          `bytes per execution: ${p.table}`,
          `${(Number(p.bytes) / n).toFixed(1)} (${formatCount(Number(p.rows))} rows, ${p.parts} parts)`,
        );
      put(n, 'process RSS (API and engine)', `${formatCount(process.memoryUsage().rss / 2 ** 20)} MiB`);
      // each step as it ends, to stderr (a long run cut short keeps what it measured)
      for (const [what, value] of columns.get(n)!) console.error(`${formatCount(n)} | ${what} | ${value}`);
    }
  } finally {
    await svc.close();
    if (!kept) removeDataDir(dir);
  }
  const ns = [...columns.keys()];
  console.log(`\n## one very large tenant (one project; embedded chDB; ${os.cpus().length} cores; p50 / p95 ms of ${samples} over HTTP)`);
  console.log(`| answer | ${ns.map((n) => `${formatCount(n)} executions`).join(' | ')} |`);
  console.log(`|---|${ns.map(() => '---|').join('')}`);
  const whats = [...new Set(ns.flatMap((n) => [...columns.get(n)!.keys()]))];
  for (const w of whats) console.log(`| ${w} | ${ns.map((n) => columns.get(n)!.get(w) ?? '').join(' | ')} |`);
}
