// The cluster rendering created and written through for real: chDB configured with a cluster
// `traceloom` of one shard on this host (test/fixtures/one-shard-cluster.ts, in a process of its
// own). Every migration's cluster DDL runs (Distributed tables over local ones, views on the local
// tables, ALTERs of both, backfills through the Distributed tables); executions are inserted
// through the Distributed table with the topology's settings and a deduplication token, the batch
// again (a retry), then a correction; the rollups, FINAL reads, the trace index and a trace-keyed
// IN subquery (distributed_product_mode = 'local') answer exactly. What this cannot show: a second
// shard, Keeper, ON CLUSTER (checked at the parser in topology-ddl.test.ts).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('cluster rendering on a one-shard cluster', () => {
  it('creates every table and view, and a retried batch and a correction sum exactly through the Distributed tables', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/one-shard-cluster.ts'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      rendered: number;
      engines: Array<{ name: string; engine: string }>;
      spendByDay: unknown[];
      live: unknown[];
      traceIndex: unknown[];
      scored: unknown[];
      userDays: unknown[];
      scoreIds: unknown[];
    };
    expect(out.rendered).toBeGreaterThan(150);
    const engine = new Map(out.engines.map((e) => [e.name, e.engine]));
    for (const table of ['executions', 'spans', 'scores', 'spend_by_dims', 'user_days', 'schema_migrations']) {
      expect(engine.get(table)).toBe('Distributed');
      expect(engine.get(`${table}_local`)).toMatch(/MergeTree$/);
    }
    for (const [name, e] of engine) if (e.endsWith('MergeTree')) expect(name).toMatch(/_local$/);
    // 1.50 corrected to 1.75 (cancel + version 2), plus 2.25; the retried batch counted once.
    expect(out.spendByDay).toEqual([{ cost: '4', n: '2', tokens: '170' }]);
    expect(out.live).toEqual([
      { trace_id: 't1', version: '2', cost: '1.75' },
      { trace_id: 't2', version: '1', cost: '2.25' },
    ]);
    expect(out.traceIndex).toEqual([
      { trace_id: 't1', version: '2' },
      { trace_id: 't2', version: '1' },
    ]);
    expect(out.scored).toEqual([{ trace_id: 't2' }]);
    expect(out.userDays).toEqual([{ user_id: 'u1', n: '2', cost: '4' }]);
    expect(out.scoreIds).toEqual([{ id: 'sc1', trace_id: 't2' }]);
  });
});
