// Quality beside cost at scale (issue 26; docs/scores.md): N executions and 2N scores generated in
// the embedded engine (INSERT ... SELECT FROM numbers()), then, over HTTP, the version comparison
// and a spend breakdown with scores, and the rate of score ingest in batches of 1,000.
import { createExecutionStamps } from '../src/executions/execution-stamp-repository.ts';
import { GENERATED, generateExecutions, type Figure, startEmbeddedService } from './executions.ts';
import { formatCount, quantile, timeEach, waitUntil } from './timing.ts';
import { removeDataDir } from './data-dir.ts';
import type { ClickHouseStore } from '../src/stores/clickhouse.ts';

const ms = (n: number) => n.toFixed(1);

export async function benchQuality(executions: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  const { svc, dir } = await startEmbeddedService('traceloom-bench-quality-');
  const ch = svc.stores.clickhouse;
  const api = `${svc.url}/api/projects/default`;
  const call = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(url, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<Record<string, unknown>>;
  };
  try {
    let t = performance.now();
    await generateExecutions(ch, executions, { promptVersions: [6, 7] });
    figures.push({
      what: `generated ${formatCount(executions)} executions (50 projects, 90 days)`,
      value: `${((performance.now() - t) / 1000).toFixed(1)} s`,
    });
    t = performance.now();
    await generateScores(ch, executions);
    figures.push({ what: `generated ${formatCount(executions * 2)} scores`, value: `${((performance.now() - t) / 1000).toFixed(1)} s` });
    // The reads and writes below are timed on a settled engine (as a service finds it after the
    // merges of its inserts), not beside the merges of 30,000,000 rows inserted a moment ago.
    t = performance.now();
    const settled = await waitUntil(
      async () => Number((await ch.query<{ n: string }>('SELECT count() AS n FROM system.merges'))[0]!.n) === 0,
      600_000,
      1_000,
    );
    figures.push({
      what: 'merges of the generated rows settled (waited before timing)',
      value: `${((performance.now() - t) / 1000).toFixed(1)} s${settled ? '' : ' (still merging after 600 s)'}`,
    });
    await call('POST', `${api}/prompts`, { prompt_id: 'support', type: 'text', template: 'v1' });
    for (let v = 2; v <= 7; v++) await call('POST', `${api}/prompts/support/versions`, { template: `v${v}` });

    const window = 'start=2026-08-03T00:00:00Z&end=2026-11-01T00:00:00Z';
    const compare = await timeEach(30, () => call('GET', `${api}/prompts/support/compare?versions=6,7&${window}`));
    const answer = await call('GET', `${api}/prompts/support/compare?versions=6,7&${window}`);
    const groups = answer.groups as Array<{ executions: number }>;
    figures.push({
      what: `compare versions 6 and 7 over 90 days (${formatCount(groups[0]!.executions)} + ${formatCount(groups[1]!.executions)} executions, their scores) (p50 / p95)`,
      value: `${ms(quantile(compare.samples, 0.5))} / ${ms(quantile(compare.samples, 0.95))} ms`,
    });
    const spend = await timeEach(30, () =>
      call('GET', `${svc.url}/api/projects/default/spend?group_by=model&scores=accuracy,resolved&${window}`),
    );
    figures.push({
      what: 'spend by model over 90 days with scores=accuracy,resolved (p50 / p95)',
      value: `${ms(quantile(spend.samples, 0.5))} / ${ms(quantile(spend.samples, 0.95))} ms`,
    });
    const plain = await timeEach(30, () => call('GET', `${svc.url}/api/projects/default/spend?group_by=model&${window}`));
    figures.push({
      what: 'the same breakdown without scores (raw, same run) (p50 / p95)',
      value: `${ms(quantile(plain.samples, 0.5))} / ${ms(quantile(plain.samples, 0.95))} ms`,
    });

    // Ingest: batches of 1,000 new scores, 4 requests in flight: answered once stored (201), and
    // accepted with Prefer: respond-async (202), timed until the last accepted score is stored.
    const batches = Number(process.env.BENCH_SCORE_BATCHES ?? 100);
    const batch = (b: number, name: string) =>
      Array.from({ length: 1_000 }, (_x, i) => ({
        id: `${name}-${b}-${i}`,
        trace_id: `tr-${(b * 1_000 + i) * 50 + 7}`,
        name,
        value: (i % 5) / 4,
      }));
    const merged = async () =>
      waitUntil(async () => Number((await ch.query<{ n: string }>('SELECT count() AS n FROM system.merges'))[0]!.n) === 0, 120_000, 500);
    const ingest = async (from: number, name: string, accepted: boolean) => {
      await merged(); // each phase starts on an engine done with the merges of the one before
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(accepted ? { Prefer: 'respond-async' } : {}) };
      const start = performance.now();
      let next = from;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let b = next++; b < from + batches; b = next++) {
            const r = await fetch(`${api}/scores`, { method: 'POST', headers, body: JSON.stringify(batch(b, name)) });
            if (r.status !== (accepted ? 202 : 201)) throw new Error(`POST scores: ${r.status} ${await r.text()}`);
            await r.arrayBuffer();
          }
        }),
      );
      if (accepted) await svc.domain.scores.loader.flush();
      const rate = (batches * 1_000) / ((performance.now() - start) / 1000);
      const [stored] = await ch.query<{ n: string }>(
        "SELECT toString(count()) AS n FROM scores FINAL WHERE project_id = 'default' AND name = {name:String} AND sign = 1",
        { name },
      );
      if (Number(stored?.n) !== batches * 1_000) throw new Error(`${name}: ${stored?.n} scores stored, ${batches * 1_000} sent`);
      return rate;
    };
    const phases: Array<[string, number, string, boolean]> = [
      ['answered once stored (201), the generated tables as inserted', 0, 'helpful', false],
      ['accepted (Prefer: respond-async, 202), until all are stored, the same tables', 0, 'helpful_accepted', true],
    ];
    for (const [what, from, name, accepted] of phases)
      figures.push({
        what: `score ingest: ${formatCount(batches * 1_000)} scores in batches of 1,000, 4 in flight, ${what}`,
        value: `${formatCount(await ingest(from, name, accepted))} scores/s`,
      });
    // The same on the tables a write reads, merged (what background merges make of them in time;
    // no merge ran once the generation was done: the parts stay as inserted).
    t = performance.now();
    for (const table of ['execution_traces', 'score_ids', 'scores']) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
    figures.push({
      what: 'OPTIMIZE FINAL of execution_traces, score_ids and scores',
      value: `${((performance.now() - t) / 1000).toFixed(1)} s`,
    });
    for (const [what, from, name, accepted] of [
      ['answered once stored (201), on other executions, those tables merged', batches, 'helpful_merged', false],
      ['accepted (202), until all are stored, the same executions, tables merged', batches, 'helpful_merged_accepted', true],
    ] as Array<[string, number, string, boolean]>)
      figures.push({
        what: `score ingest: ${formatCount(batches * 1_000)} scores, ${what}`,
        value: `${formatCount(await ingest(from, name, accepted))} scores/s`,
      });
    // The raw figure of the same run: the engine's own insert of as many stamped score rows, in
    // rounds of 10,000 through the score views, with no HTTP, no check and no read: the ceiling
    // of what a write path can store on this machine now.
    await merged();
    const rawStamps = await createExecutionStamps(svc.stores.clickhouse).scoreStamps(
      'default',
      Array.from({ length: 10_000 }, (_x, i) => `tr-${(2 * batches * 1_000 + i) * 50 + 7}`),
    );
    const rawRounds = Array.from({ length: batches / 10 }, (_x, r) =>
      Array.from({ length: 10_000 }, (_y, i) => {
        const traceId = `tr-${(2 * batches * 1_000 + i) * 50 + 7}`;
        return {
          project_id: 'default',
          id: `raw-${r}-${i}`,
          trace_id: traceId,
          name: `raw_${r}`,
          data_type: 'NUMERIC',
          value: (i % 5) / 4,
          source: 'api',
          author: 'bench',
          created_at: '2026-11-01 00:00:00.000',
          updated_at: '2026-11-01 00:00:00.000',
          ...rawStamps.get(traceId),
          counted: 1,
          version: Date.now() * 1_000 + i,
          sign: 1,
        };
      }),
    );
    t = performance.now();
    for (const rows of rawRounds) await ch.insert('scores', rows, { optimize_on_insert: 0 });
    figures.push({
      what: `raw, same run: the engine's insert of ${formatCount(batches * 1_000)} stamped score rows, 10,000 per insert, through the score views (no HTTP, check nor read)`,
      value: `${formatCount((batches * 1_000) / ((performance.now() - t) / 1000))} scores/s`,
    });
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}

/**
 * Two scores per generated execution (of `generateExecutions` with the same `project` option): a
 * NUMERIC accuracy and a BOOLEAN resolved, both a little better with version 7, stamped with their
 * execution's dimensions as a write would stamp them.
 */
export async function generateScores(
  ch: ClickHouseStore,
  executions: number,
  opts: { project?: string; /** as generateExecutions' option of the same name */ startedAt?: string } = {},
): Promise<void> {
  const chunk = 2_000_000;
  const g = GENERATED;
  const uses = g.usesPrompt;
  for (let offset = 0; offset < executions; offset += chunk) {
    await ch.command(
      `INSERT INTO scores (project_id, trace_id, id, version, sign, span_id, session_id, name, data_type, value, label, comment, source, author, config_id, created_at, updated_at,
         counted, exec_version, exec_hour, exec_provider, exec_model, exec_agent_id, exec_user_id, exec_session_id, exec_prompt_ids, exec_prompt_versions, exec_prompt_refs)
       SELECT ${opts.project ? `'${opts.project.replace(/[^a-z0-9-]/g, '')}'` : g.projectId} AS project_id, ${g.traceId}, concat('s-', toString(number), '-', n.2),
         1, 1, '', '', n.2, n.1, n.3, if(n.1 = 'BOOLEAN', if(n.3 = 1, 'true', 'false'), ''), '', 'eval', 'bench', '',
         ${opts.startedAt ?? g.startedAt} AS at, at,
         1, 1, toStartOfHour(at, 'UTC'), ${g.provider}, ${g.model}, ${g.agentId}, '', '',
         if(${uses}, ['support'], []), if(${uses}, [toUInt32(${g.version([6, 7])})], []), if(${uses}, ['latest'], [])
       FROM numbers(${offset}, ${Math.min(chunk, executions - offset)})
       ARRAY JOIN [('NUMERIC', 'accuracy', (number % 100) / 100 + if(intDiv(number, 4) % 2 = 1, 0.02, 0)),
                   ('BOOLEAN', 'resolved', toFloat64((number % 10) < if(intDiv(number, 4) % 2 = 1, 7, 6)))] AS n`,
    );
  }
}
