// The service on a ClickHouse cluster (Distributed tables over local ones, views on the local
// tables, the cluster settings on every query), and with the Cloud rendering, answers as on a
// single node: the same OTLP traces, scores and reads (test/fixtures/one-shard-service.ts), run on
// a one-shard cluster of chDB, with the Cloud DDL, and on a single node, each in a process of its
// own; the answers, ids aside, are equal. The reads cover the list (with score filters:
// trace-keyed IN subqueries), a trace's detail and hierarchy (FINAL, the trace index), spend
// breakdowns with scores (rollups through Distributed tables), stats, the sessions page and the
// JSON Lines export. What one shard cannot show: rows of one key on several shards (a view reading
// the Distributed table instead of the local one, or an IN subquery without
// distributed_product_mode, still answer right on one shard): the layout and query tests check
// those (topology-ddl.test.ts, topology-queries.test.ts). Every run uses the embedded PostgreSQL
// whatever the mode: ClickHouse is under test.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

type Run = { ids: string[]; answers: Record<string, unknown> };

function run(topology: 'cluster' | 'cloud' | 'single'): Run {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/one-shard-service.ts', topology], {
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Run;
}

/** The answers with what differs between runs named by role: trace ids by list position, span and score ids, clock times. */
function normalized({ ids, answers }: Run): unknown {
  let text = JSON.stringify(answers);
  ids.forEach((id, i) => (text = text.replaceAll(id, `trace-${i}`)));
  text = text
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, 'uuid')
    .replace(/\b[0-9a-f]{16}\b/g, 'span')
    .replace(/(\\?"(?:created_at|updated_at|received_at)\\?":\s*\\?")[^"\\]*/g, '$1time');
  return JSON.parse(text);
}

let single: Run | undefined;
const singleRun = () => (single ??= run('single'));

describe('the service on each topology the embedded engine can run', () => {
  it('answers as on a single node', () => {
    const cluster = run('cluster');
    expect(cluster.ids).toHaveLength(3);
    expect(cluster.answers.posted).toBe(200);
    expect(cluster.answers.scored).toBe(201);
    expect((cluster.answers.withScore as { items: unknown[] }).items).toHaveLength(2);
    expect((cluster.answers.scoreAbove as { items: unknown[] }).items).toHaveLength(1);
    expect((cluster.answers.spendByModel as { total: { executions: number } }).total.executions).toBe(3);
    expect(normalized(cluster)).toEqual(normalized(singleRun()));
  });

  it('with the Cloud rendering (no ON CLUSTER, no Replicated names), answers as on a single node too', () => {
    expect(normalized(run('cloud'))).toEqual(normalized(singleRun()));
  });
});
