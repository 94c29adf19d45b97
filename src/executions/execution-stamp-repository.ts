// The stamp a score carries (src/scores/score-stamps.ts, docs/scores.md "Storage"): its
// execution's version, hour and dimensions, read from the trace index that carries it
// (schema/clickhouse/014_execution_stamps.sql), or from the executions row for a trace indexed
// before it did.
import type { ClickHouseStore } from '../stores/clickhouse.ts';
import { liveRows } from '../stores/live-rows.ts';

/** The execution's dimensions as a score stores them (`exec_version` '0': no execution known). */
export interface ExecutionStamp {
  exec_version: string;
  exec_hour: string;
  exec_provider: string;
  exec_model: string;
  exec_agent_id: string;
  exec_user_id: string;
  exec_session_id: string;
  exec_prompt_ids: string[];
  exec_prompt_versions: number[];
  exec_prompt_refs: string[];
}

export function createExecutionStamps(ch: ClickHouseStore) {
  return {
    /**
     * The stamp a score of each of these traces carries (src/scores/score-stamps.ts): its live
     * execution's version, hour and dimensions, and per distinct prompt the version and reference
     * of its first use. Traces without an execution are absent. Read from the trace index, which
     * carries the stamp (schema/clickhouse/014_execution_stamps.sql); a trace indexed before it
     * did is read from its executions row.
     */
    async scoreStamps(projectId: string, traceIds: string[]): Promise<Map<string, ExecutionStamp>> {
      if (traceIds.length === 0) return new Map();
      // Thousands of rows per score write: read as RowBinary (docs/scores.md, "Storage").
      const indexed = await ch.queryBinary<ExecutionStamp & { trace_id: string; stamped: number }>(
        `SELECT trace_id, stamped, toString(version) AS exec_version, toString(toStartOfHour(started_at, 'UTC')) AS exec_hour,
           provider AS exec_provider, model AS exec_model, agent_id AS exec_agent_id, user_id AS exec_user_id,
           session_id AS exec_session_id, prompt_ids AS exec_prompt_ids, prompt_versions AS exec_prompt_versions, prompt_refs AS exec_prompt_refs
         FROM execution_traces
         PREWHERE project_id = {p:String} AND trace_id IN {ids:Array(String)}`,
        { p: projectId, ids: traceIds },
        'scores.stamps',
      );
      // Read without FINAL (a third less for thousands of traces) and settled here as FINAL would:
      // a trace's newest version wins (rows of one version are one execution's, alike).
      const newest = liveRows(
        indexed.map((row) => ({ ...row, version: row.exec_version })),
        (row) => row.trace_id,
      );
      const stamps = new Map<string, ExecutionStamp>();
      const unstamped: string[] = [];
      for (const { trace_id, stamped, version: _v, ...stamp } of newest.values()) {
        if (Number(stamped) === 1) stamps.set(trace_id, stamp);
        else unstamped.push(trace_id);
      }
      if (unstamped.length === 0) return stamps;
      const rows = await ch.query<ExecutionStamp & { trace_id: string }>(
        `SELECT trace_id, toString(version) AS exec_version, toString(toStartOfHour(started_at, 'UTC')) AS exec_hour,
           provider AS exec_provider, model AS exec_model, agent_id AS exec_agent_id, user_id AS exec_user_id,
           session_id AS exec_session_id, arrayDistinct(\`tu.prompt_id\`) AS exec_prompt_ids,
           arrayMap(id -> arrayFirst((v, x) -> x = id, \`tu.version\`, \`tu.prompt_id\`), exec_prompt_ids) AS exec_prompt_versions,
           arrayMap(id -> arrayFirst((r, x) -> x = id, \`tu.version_ref\`, \`tu.prompt_id\`), exec_prompt_ids) AS exec_prompt_refs
         FROM executions FINAL
         WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)} AND sign = 1
           AND (started_at, trace_id) IN (SELECT started_at, trace_id FROM execution_traces WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)})
         SETTINGS do_not_merge_across_partitions_select_final = 1`,
        { p: projectId, ids: unstamped },
        'scores.stamps.unindexed',
      );
      for (const { trace_id, ...stamp } of rows) stamps.set(trace_id, stamp);
      return stamps;
    },
  };
}

export type ExecutionStamps = ReturnType<typeof createExecutionStamps>;
