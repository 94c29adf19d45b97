// What assembly and direct recording read and write in `executions` and its trace index
// `execution_traces`: the insert of new executions (and their corrections), the rows a correction
// starts from, the content hash that makes a record idempotent, and the recovery reads after a
// restart (which look across projects).
import type { ClickHouseSettings } from '@clickhouse/client';
import type { ClickHouseStore } from '../stores/clickhouse.ts';

type Waiter = { resolve: (hash: string | undefined) => void; reject: (err: unknown) => void };

/** A stored execution row as read back: every column (decimals as text). */
export type StoredExecution = Record<string, unknown> & { trace_id: string };

export interface CurrentRows {
  rows: Map<string, StoredExecution>;
  located: Set<string>;
}

/** How executions are inserted: deduplicated by the token, down to the materialized views. */
function insertSettings(dedupToken: string): ClickHouseSettings {
  return {
    insert_deduplication_token: dedupToken,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    max_partitions_per_insert_block: '1000',
    // No collapsing within the inserted block: readers use FINAL or sum(sign), and the views
    // sum with sign, so it changes no answer; it saves a sort-and-merge pass per insert.
    optimize_on_insert: 0,
  };
}

export function createExecutionAssembly(ch: ClickHouseStore) {
  const pendingLookups = new Map<string, Map<string, Waiter[]>>();
  let lookupScheduled = false;
  function runLookups(): void {
    lookupScheduled = false;
    const batch = [...pendingLookups];
    pendingLookups.clear();
    for (const [projectId, byTrace] of batch) {
      const ids = [...byTrace.keys()];
      ch.query<{ trace_id: string; content_hash: string }>(
        'SELECT trace_id, content_hash FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids },
        'executions.traceHash',
      ).then(
        (rows) => {
          const found = new Map(rows.map((r) => [r.trace_id, r.content_hash]));
          for (const [traceId, waiters] of byTrace) for (const w of waiters) w.resolve(found.get(traceId));
        },
        (err: unknown) => {
          for (const waiters of byTrace.values()) for (const w of waiters) w.reject(err);
        },
      );
    }
  }

  return {
    /** The stored rows (latest version) of these traces, every column, exact decimals as text; and which traces the index knows. */
    async current(projectId: string, traceIds: string[]): Promise<CurrentRows> {
      const located = await ch.query<{ trace_id: string; started_at: string }>(
        'SELECT trace_id, started_at FROM execution_traces FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids: traceIds },
        'assembly.locate',
      );
      if (located.length === 0) return { rows: new Map(), located: new Set() };
      const rows = await ch.query<StoredExecution>(
        `SELECT * REPLACE (toString(cost_usd) AS cost_usd, toString(cost_computed_usd) AS cost_computed_usd)
         FROM executions FINAL
         WHERE project_id = {p:String} AND started_at IN {starts:Array(DateTime64(3, 'UTC'))}
           AND trace_id IN {ids:Array(String)} AND sign = 1
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { p: projectId, starts: [...new Set(located.map((l) => l.started_at))], ids: located.map((l) => l.trace_id) },
        'assembly.current',
      );
      return { rows: new Map(rows.map((r) => [r.trace_id, r])), located: new Set(located.map((l) => l.trace_id)) };
    },

    /** Of these traces, the ones the trace index knows (light key reads, no FINAL). */
    async indexedTraces(projectId: string, traceIds: string[]): Promise<string[]> {
      const rows = await ch.query<{ trace_id: string }>(
        'SELECT trace_id FROM execution_traces WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}',
        { p: projectId, ids: traceIds },
        'assembly.known.executions',
      );
      return rows.map((r) => r.trace_id);
    },

    /** When each trace assembled since then was last written (every project). */
    async assembledSince(since: string): Promise<Array<{ project_id: string; trace_id: string; at: string }>> {
      return ch.query<{ project_id: string; trace_id: string; at: string }>(
        `SELECT project_id, trace_id, max(received_at) AS at FROM executions
         WHERE received_at >= toDateTime64({since:String}, 3, 'UTC') AND source = 'otlp' AND sign = 1
         GROUP BY project_id, trace_id`,
        { since },
        'assembly.recover.executions',
      );
    },

    /** Traces (every project) whose executions were written since then: the stamp sweep at start (src/scores/stamp-sweep.ts). */
    async writtenSince(since: string): Promise<Array<{ project_id: string; trace_id: string }>> {
      return ch.query<{ project_id: string; trace_id: string }>(
        `SELECT project_id, trace_id FROM executions PREWHERE received_at >= toDateTime64({since:String}, 3, 'UTC') WHERE sign = 1
         GROUP BY project_id, trace_id`,
        { since },
        'scores.sweep.executions',
      );
    },

    /**
     * Executions encoded as they are added (only their bytes kept), then written in one insert
     * (deduplicated by the token, down to the materialized views). `add` throws RowEncodeError for
     * a row no column takes, and adds nothing.
     */
    async batch(): Promise<{ add(row: object): void; readonly rows: number; insert(dedupToken: string): Promise<void> }> {
      const sink = await ch.rowSink('executions');
      return {
        add: (row) => sink.add(row),
        get rows() {
          return sink.rows;
        },
        insert: (dedupToken) => sink.send(insertSettings(dedupToken)),
      };
    },

    /**
     * The content hash of a recorded trace, or undefined when the trace is new. Lookups that
     * arrive together are answered by one query per project (ingest sends many at once).
     */
    traceHash(projectId: string, traceId: string): Promise<string | undefined> {
      return new Promise((resolve, reject) => {
        let byTrace = pendingLookups.get(projectId);
        if (!byTrace) pendingLookups.set(projectId, (byTrace = new Map()));
        const waiting = byTrace.get(traceId) ?? [];
        waiting.push({ resolve, reject });
        byTrace.set(traceId, waiting);
        if (!lookupScheduled) {
          lookupScheduled = true;
          setImmediate(runLookups);
        }
      });
    },
  };
}

export type ExecutionAssembly = ReturnType<typeof createExecutionAssembly>;
